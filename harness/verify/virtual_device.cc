#include "harness/verify/virtual_device.h"

#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"
#include "harness/measure/emulator_verifier.h"

namespace mgpu::harness {

std::optional<std::string> why_not_verifiable(const core::ArchSpec& arch) {
  if (arch.name == std::string_view("sm_90a")) return std::nullopt;
  return fmt::format("the virtual device does not run {} kernels yet (tcgen05 and tensor memory are not emulated)",
                     arch.name);
}

std::string use_virtual_device(const std::string& what) {
  std::string lib = find_virtual_device_library();
  if (lib.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{}: libmgpu_vcuda.so (the virtual device) is neither beside this executable nor "
                                  "named by MGPU_CUDA_DRIVER", what));
  setenv("MGPU_CUDA_DRIVER", lib.c_str(), 1);  // for this process and the workers it starts
  setenv("MGPU_EMU_REPORTS", "off", 0);        // findings come back in each trial's message
  setenv("MGPU_EMU_RACES", "1", 0);            // verified means race-checked too (MGPU_EMU_RACES=0 to skip)
  return lib;
}

results::Environment virtual_environment(const core::ArchSpec& arch) {
  return {fmt::format("mgpu-tune virtual {} (emulated)", arch.name), std::string(arch.name),
          fmt::format("{}.{}", arch.cc_major, arch.cc_minor), arch.default_device().sm_count, "", "", 0};
}

}  // namespace mgpu::harness
