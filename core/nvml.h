// NVML (libnvidia-ml.so.1), opened at run time for what the CUDA driver API does not tell:
// the driver's own version string now; clocks, temperature, power and throttle reasons later.
// Contract: Nvml::get() initializes NVML once per process and throws Error{Unavailable} when it
// cannot. The few entry points are declared here from NVML's stable C ABI (the CUDA toolkit
// ships no nvml.h).
#pragma once

#include <string>

#include "core/dynlib.h"

namespace mgpu::core {

class Nvml {
 public:
  static const Nvml& get();
  std::string driver_version() const;  // e.g. "580.159.04"

 private:
  explicit Nvml(DynamicLibrary lib);
  DynamicLibrary lib_;
  using SystemGetDriverVersionFn = int(char*, unsigned);
  SystemGetDriverVersionFn* system_get_driver_version_ = nullptr;
};

}  // namespace mgpu::core
