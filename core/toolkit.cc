#include "core/toolkit.h"

#include <cstdlib>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

}  // namespace

std::string_view to_string(RuntimeLibrary lib) {
  switch (lib) {
    case RuntimeLibrary::CudaDriver: return "CUDA driver (libcuda)";
    case RuntimeLibrary::Nvml: return "NVML";
    case RuntimeLibrary::NvJitLink: return "nvJitLink";
    case RuntimeLibrary::Cupti: return "CUPTI";
    case RuntimeLibrary::CublasLt: return "cuBLASLt";
  }
  return "library";
}

std::string cuda_toolkit_root() {
  return env_or("MGPU_CUDA_HOME", env_or("CUDA_HOME", MGPU_CUDA_ROOT));
}

std::string ptxas_path() { return env_or("MGPU_PTXAS", cuda_toolkit_root() + "/bin/ptxas"); }

int cuda_toolkit_major_version() { return MGPU_CUDA_MAJOR; }

std::vector<std::string> runtime_library_candidates(RuntimeLibrary lib) {
  // The driver and NVML come with the driver, never with the toolkit: only their sonames.
  // MGPU_CUDA_DRIVER names another driver library, e.g. the virtual device (libmgpu_vcuda.so).
  if (lib == RuntimeLibrary::CudaDriver) return {env_or("MGPU_CUDA_DRIVER", "libcuda.so.1")};
  if (lib == RuntimeLibrary::Nvml) return {"libnvidia-ml.so.1"};

  std::string base = lib == RuntimeLibrary::NvJitLink ? "libnvJitLink"
                     : lib == RuntimeLibrary::Cupti   ? "libcupti"
                                                      : "libcublasLt";
  std::string soname = fmt::format("{}.so.{}", base, cuda_toolkit_major_version());
  std::string root = cuda_toolkit_root();
  std::vector<std::string> out = {soname, root + "/lib64/" + soname, root + "/lib/" + soname,
                                  root + "/targets/x86_64-linux/lib/" + soname};
  if (lib == RuntimeLibrary::Cupti) out.push_back(root + "/extras/CUPTI/lib64/" + soname);
  return out;
}

DynamicLibrary load_runtime_library(RuntimeLibrary lib) {
  auto candidates = runtime_library_candidates(lib);
  try {
    return DynamicLibrary::open(candidates);
  } catch (const Error& e) {
    throw Error(ErrorKind::Unavailable, fmt::format("{} is not available: {}", to_string(lib), e.what()));
  }
}

}  // namespace mgpu::core
