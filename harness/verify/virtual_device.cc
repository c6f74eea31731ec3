#include "harness/verify/virtual_device.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "core/emu/environment.h"
#include "core/error.h"
#include "harness/measure/emulator_verifier.h"

namespace mgpu::harness {

std::optional<std::string> why_not_verifiable(const core::ArchSpec& arch) {
  // The 'a' targets: the kernels use wgmma / tcgen05, which only they have; the virtual device
  // presents an H100 (sm_90a) or a B200 (sm_100a).
  if (arch.name == std::string_view("sm_90a") || arch.name == std::string_view("sm_100a")) return std::nullopt;
  return fmt::format("the virtual device presents sm_90a or sm_100a, not {}", arch.name);
}

void check_virtual_device_knobs(const std::string& what) {
  // A knob set to what it does not take would fail every launch in the workers, each recorded
  // as its config's launch error: refused before any work, as the bad input it is.
  try {
    emu::check_environment();
  } catch (const std::invalid_argument& e) {
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("{}: {}", what, e.what()));
  }
}

std::vector<std::string> virtual_device_environment(const core::ArchSpec& arch, const std::string& what) {
  std::string lib = find_virtual_device_library();
  if (lib.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{}: libmgpu_vcuda.so (the virtual device) is neither beside this executable nor "
                                  "named by MGPU_CUDA_DRIVER", what));
  check_virtual_device_knobs(what);
  const char* races = std::getenv("MGPU_EMU_RACES");  // verified means race-checked too, unless turned off
  return {"MGPU_CUDA_DRIVER=" + lib, "MGPU_EMU_REPORTS=off",
          std::string("MGPU_EMU_RACES=") + (races && *races ? races : "1"), "MGPU_EMU_ARCH=" + std::string(arch.name)};
}

std::string use_virtual_device(const core::ArchSpec& arch, const std::string& what) {
  std::string lib;
  for (const std::string& e : virtual_device_environment(arch, what)) {
    size_t eq = e.find('=');
    setenv(e.substr(0, eq).c_str(), e.c_str() + eq + 1, 1);
    if (e.rfind("MGPU_CUDA_DRIVER=", 0) == 0) lib = e.substr(eq + 1);
  }
  return lib;
}

results::Environment virtual_environment(const core::ArchSpec& arch) {
  return {fmt::format("mgpu-tune virtual {} (emulated)", arch.name), std::string(arch.name),
          fmt::format("{}.{}", arch.cc_major, arch.cc_minor), arch.default_device().sm_count, "", "", 0};
}

}  // namespace mgpu::harness
