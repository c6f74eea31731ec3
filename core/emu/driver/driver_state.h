// The state behind the virtual device's CUDA driver ABI: one Device, the handles the driver
// API hands out (modules, functions, streams, events) and the last launch's result. Contract:
// one process-wide instance, guarded by a mutex (the driver API is thread-safe); a fault
// makes the context unusable as on a GPU: every later call returns the same error until the
// primary context is released.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core/emu/check/launch_json.h"
#include "core/emu/device.h"

namespace mgpu::emu {

struct EmuFunction {
  const LoadedModule* module = nullptr;
  std::string name;
  int max_dynamic_smem = 48 * 1024;
  bool non_portable_cluster = false;     // CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
  unsigned required_cluster[3] = {0, 0, 0};  // CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*: 0 none
};

struct DriverState {
  std::mutex mu;
  bool initialized = false;
  int primary_refs = 0;
  // Which creation of the primary context is live (cuCtxGetId): a new one each time the first
  // retain after a full release creates it again, though its handle stays the same.
  unsigned long long context_id = 0;
  CUresult sticky = CUDA_SUCCESS;
  std::string sticky_reason;  // the fault that lost the context, said again by every later refusal
  std::unique_ptr<Device> device = std::make_unique<Device>();
  std::map<CUfunction, std::unique_ptr<EmuFunction>> functions;
  std::string last_launch_json = "{}";
  std::string last_error;  // a load or launch failure, in words
  std::uint64_t next_handle = 0x1000;
  std::set<std::uint64_t> streams;  // stream handles created and not yet destroyed
  std::set<std::uint64_t> events;   // event handles likewise
  bool loaded_sm100 = false;  // a module targeting sm_100a was loaded (the device presents sm_100a)

  static DriverState& get();
  CUresult fail(CUresult code, std::string why);  // records the reason, returns code
};

// CUresult for a fatal report (what a GPU's driver would return).
CUresult fault_code(ReportKind k);

}  // namespace mgpu::emu
