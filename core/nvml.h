// NVML (libnvidia-ml.so.1), opened at run time for what the CUDA driver API does not tell:
// the driver's own version string now; clocks, temperature, power and throttle reasons later.
// Contract: Nvml::get() initializes NVML once per process and throws Error{Unavailable} when it
// cannot. The few entry points are declared here from NVML's stable C ABI (the CUDA toolkit
// ships no nvml.h).
#pragma once

#include <string>

#include "core/dynlib.h"

namespace mgpu::core {

struct ClockState {
  double sm_mhz = 0;
  unsigned long long reasons = 0;  // NVML clocks-event (throttle) reason bits
  bool throttled = false;          // power cap, thermal or hardware slowdown active
};

class Nvml {
 public:
  static const Nvml& get();
  std::string driver_version() const;  // e.g. "580.159.04"
  ClockState clock_state(unsigned index) const;  // zeros when NVML cannot tell

 private:
  explicit Nvml(DynamicLibrary lib);
  DynamicLibrary lib_;
  using SystemGetDriverVersionFn = int(char*, unsigned);
  using GetHandleFn = int(unsigned, void**);
  using GetClockFn = int(void*, int, unsigned*);
  using GetReasonsFn = int(void*, unsigned long long*);
  SystemGetDriverVersionFn* system_get_driver_version_ = nullptr;
  GetHandleFn* get_handle_ = nullptr;
  GetClockFn* get_clock_ = nullptr;
  GetReasonsFn* get_reasons_ = nullptr;
};

}  // namespace mgpu::core
