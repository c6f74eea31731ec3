// What GPUs this machine has, as the driver reports them. Contract: query_devices() never
// throws for a missing driver or GPU; it returns an empty list with `unavailable` set to a
// one-line reason instead. A driver the environment sets up wrongly (the virtual device given
// an MGPU_EMU_ARCH it does not take) is Error{InvalidInput}, the user's to fix, not "no GPU".
// Each GPU carries the arch mgpu-tune would compile for it, if any.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/arch.h"

namespace mgpu::core {

struct GpuInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  int smem_per_block_optin = 0;
  int sm_clock_khz = 0;
  bool cluster_launch = false;
  const ArchSpec* arch = nullptr;  // nullptr when mgpu-tune has no target for this GPU
};

struct DeviceReport {
  std::optional<std::string> unavailable;  // why no GPU can be used, when none can
  int driver_cuda_version = 0;             // e.g. 13000
  std::string driver_version;              // from NVML, e.g. "580.159.04"; empty if unknown
  std::vector<GpuInfo> gpus;
};

DeviceReport query_devices();

}  // namespace mgpu::core
