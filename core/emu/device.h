// The virtual sm_90a device: load PTX modules, allocate and copy device memory, launch
// kernels. This is the C++ face the driver library (driver/) and tests use. Contract:
// load() throws ptx::ParseError or Fault{Unsupported} naming the line (also for a .shared or
// .local declaration larger than any GPU holds: a block's shared memory, 512 KiB of local memory
// per thread; and for .global variables beyond the device's 16 GiB or .const ones beyond CUDA's
// 64 KiB, all of a module's together); unload() frees a module
// and its global variables (false for one this device does not hold); launch() never throws
// for what the kernel does -- a fault, deadlock or hang ends the launch and comes back as the
// result's fatal report, and hazards come back as reports while the results are kept.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/emu/check/bank_conflicts.h"
#include "core/emu/check/report.h"
#include "core/emu/exec/state.h"
#include "core/emu/ptx/module.h"

namespace mgpu::emu {

// CUDA's local memory per thread (CUDA C++ Programming Guide, "Features and Technical
// Specifications"): a larger .local declaration, or a kernel's together, is refused.
inline constexpr std::uint64_t kMaxLocalPerThread = 512 * 1024;
// The virtual device's memory (what cuDeviceTotalMem reports and cuMemAlloc holds to): it is this
// process's, so a module's .global variables beyond it are refused at load, not allocated.
inline constexpr std::uint64_t kDeviceMemory = std::uint64_t{16} << 30;
// CUDA's constant memory: 64 KiB for a module's .const variables together (ptxas refuses more).
inline constexpr std::uint64_t kMaxConstBytes = 64 * 1024;

struct LoadedModule {
  ptx::Module ptx;
  std::vector<std::vector<Insn>> code;     // per kernel
  std::vector<std::uint64_t> global_vars;  // device addresses of .global/.const variables
};

struct LaunchResult {
  bool ok = true;                // no fatal report
  std::vector<Report> reports;   // the fatal one (if any) first, then hazards in order found
  std::string printf_output;
  std::uint64_t instructions = 0;         // warp-instructions executed
  std::uint64_t thread_instructions = 0;  // the same counted per active thread
  BankReport banks;                       // shared-memory bank conflicts (check/bank_conflicts.h)
};

class Device {
 public:
  GlobalMemory& memory() { return memory_; }
  LoadedModule& load(const std::string& ptx_text);
  bool unload(const LoadedModule* m);
  bool holds(const LoadedModule* m) const;
  std::size_t module_count() const { return modules_.size(); }
  // args[i] points at the value of kernel parameter i (the cuLaunchKernel convention).
  LaunchResult launch(const LoadedModule& m, const std::string& kernel, const LaunchConfig& config, void* const* args);
  // Static shared memory a kernel declares (dynamic shared memory comes on top).
  static std::uint32_t static_shared_bytes(const LoadedModule& m);

 private:
  GlobalMemory memory_;
  std::vector<std::unique_ptr<LoadedModule>> modules_;
};

}  // namespace mgpu::emu
