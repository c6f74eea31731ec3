#include "core/nvml.h"

#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/toolkit.h"

namespace mgpu::core {

Nvml::Nvml(DynamicLibrary lib) : lib_(std::move(lib)) {
  auto init = lib_.require<int()>("nvmlInit_v2");
  if (int rc = init(); rc != 0)
    throw Error(ErrorKind::Unavailable, fmt::format("nvmlInit_v2 failed with NVML error {}", rc));
  system_get_driver_version_ = lib_.require<SystemGetDriverVersionFn>("nvmlSystemGetDriverVersion");
  get_handle_ = lib_.require<GetHandleFn>("nvmlDeviceGetHandleByIndex_v2");
  get_clock_ = lib_.require<GetClockFn>("nvmlDeviceGetClockInfo");
  // Renamed in recent drivers; both names are exported by current ones.
  void* reasons = lib_.symbol("nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = lib_.symbol("nvmlDeviceGetCurrentClocksThrottleReasons");
  get_reasons_ = reinterpret_cast<GetReasonsFn*>(reasons);
}

ClockState Nvml::clock_state(unsigned index) const {
  ClockState s;
  void* dev = nullptr;
  if (get_handle_(index, &dev) != 0) return s;
  unsigned mhz = 0;
  if (get_clock_(dev, /*NVML_CLOCK_SM=*/1, &mhz) == 0) s.sm_mhz = mhz;
  if (get_reasons_ && get_reasons_(dev, &s.reasons) == 0) {
    // SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40, HW power brake 0x80
    s.throttled = (s.reasons & (0x4 | 0x8 | 0x20 | 0x40 | 0x80)) != 0;
  }
  return s;
}

const Nvml& Nvml::get() {
  static std::once_flag once;
  static std::optional<Nvml> nvml;
  static std::optional<Error> failure;
  std::call_once(once, [] {
    try {
      nvml.emplace(Nvml(load_runtime_library(RuntimeLibrary::Nvml)));
    } catch (const Error& e) {
      failure.emplace(e);
    }
  });
  if (failure) throw *failure;
  return *nvml;
}

std::string Nvml::driver_version() const {
  char buf[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  if (system_get_driver_version_(buf, sizeof buf) != 0) return {};
  return buf;
}

}  // namespace mgpu::core
