#include "core/cuda_driver.h"

#include <cstdlib>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/toolkit.h"

namespace mgpu::core {

CudaDriver::CudaDriver(DynamicLibrary lib) : lib_(std::move(lib)) {
  auto get_proc = lib_.require<std::remove_pointer_t<decltype(&::cuGetProcAddress)>>(
      "cuGetProcAddress_v2");
  auto load = [&](const char* name, int version, void** slot) {
    CUdriverProcAddressQueryResult status{};
    CUresult r = get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r != CUDA_SUCCESS || *slot == nullptr)
      throw Error(ErrorKind::Unavailable,
                  fmt::format("the CUDA driver at {} lacks {} as of CUDA {}.{} (a driver older than that?)",
                              lib_.path(), name, version / 1000, version % 1000 / 10));
  };
#define MGPU_LOAD_PTR(fn, version) load(#fn, version, reinterpret_cast<void**>(&api_.fn));
  MGPU_CUDA_DRIVER_FUNCTIONS(MGPU_LOAD_PTR)
#undef MGPU_LOAD_PTR

  CUresult r = api_.cuInit(0);
  if (r != CUDA_SUCCESS) {
    // The virtual device refuses to start only for a setting of its own (MGPU_EMU_ARCH), and
    // says which in its mgpuEmuLastError extension (a GPU's driver does not know it): bad input.
    CUresult (*last_error)(const char**) = nullptr;
    CUdriverProcAddressQueryResult status{};
    const char* why = nullptr;
    if (get_proc("mgpuEmuLastError", reinterpret_cast<void**>(&last_error), CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                 &status) == CUDA_SUCCESS &&
        status == CU_GET_PROC_ADDRESS_SUCCESS && last_error && last_error(&why) == CUDA_SUCCESS && why && *why)
      throw Error(ErrorKind::InvalidInput, fmt::format("the virtual device ({}) cannot start: {}", lib_.path(), why));
    const char* name = nullptr;
    api_.cuGetErrorName(r, &name);
    throw Error(ErrorKind::Unavailable,
                fmt::format("the CUDA driver found no usable GPU (cuInit: {})", name ? name : "?"));
  }
  check(api_.cuDriverGetVersion(&version_), "cuDriverGetVersion", ErrorKind::Unavailable);
  // The virtual device answers for its own extension; a GPU's driver does not know it.
  CUdriverProcAddressQueryResult status{};
  get_proc("mgpuEmuLastLaunch", reinterpret_cast<void**>(&emu_last_launch_), CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (status != CU_GET_PROC_ADDRESS_SUCCESS) emu_last_launch_ = nullptr;
}

std::string CudaDriver::last_emulated_launch() const {
  const char* json = nullptr;
  if (!emu_last_launch_ || emu_last_launch_(&json) != CUDA_SUCCESS || !json) return "";
  return json;
}

const CudaDriver& CudaDriver::get() {
  // Loaded once; a failure is remembered so every caller sees the same one-line reason.
  static std::once_flag once;
  static std::optional<CudaDriver> driver;
  static std::optional<Error> failure;
  std::call_once(once, [] {
    std::optional<DynamicLibrary> lib;
    try {
      lib.emplace(load_runtime_library(RuntimeLibrary::CudaDriver));
    } catch (const Error&) {
      const char* chosen = std::getenv("MGPU_CUDA_DRIVER");
      failure.emplace(ErrorKind::Unavailable,
                      chosen && *chosen ? fmt::format("MGPU_CUDA_DRIVER={} could not be loaded", chosen)
                                        : std::string("libcuda.so.1 not found (no NVIDIA driver on this machine)"));
      return;
    }
    try {
      driver.emplace(CudaDriver(std::move(*lib)));
    } catch (const Error& e) {
      failure.emplace(e);
    }
  });
  if (failure) throw *failure;
  return *driver;
}

void CudaDriver::check(CUresult result, std::string_view call, ErrorKind kind) const {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  api_.cuGetErrorName(result, &name);
  api_.cuGetErrorString(result, &text);
  throw CudaError(kind, fmt::format("{} failed: {} ({})", call, name ? name : "unknown error",
                                    text ? text : "no description"),
                  result);
}

bool CudaError::is_fault() const {
  switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
      return true;
    default:
      return false;
  }
}

}  // namespace mgpu::core
