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
