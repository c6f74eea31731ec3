// The CUDA driver API, opened at run time from libcuda.so.1 (never linked), so mgpu-tune runs
// on machines without a driver. Contract: CudaDriver::get() loads the library and calls
// cuInit(0) once per process; when there is no driver or no usable GPU it throws
// Error{Unavailable} with a one-line reason (the same reason on every later call).
// check() turns a CUresult into an Error of the given kind naming the call and the driver's
// error name. Entry points come from cuGetProcAddress at this header's CUDA_VERSION, so each
// pointer has exactly the prototype declared in <cuda.h>.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "core/dynlib.h"
#include "core/error.h"

namespace mgpu::core {

// X(name) for every driver entry point mgpu-tune uses.
#define MGPU_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                           \
  X(cuDriverGetVersion)               \
  X(cuGetErrorName)                   \
  X(cuGetErrorString)                 \
  X(cuDeviceGetCount)                 \
  X(cuDeviceGet)                      \
  X(cuDeviceGetName)                  \
  X(cuDeviceGetAttribute)             \
  X(cuDeviceTotalMem)                 \
  X(cuDevicePrimaryCtxRetain)         \
  X(cuDevicePrimaryCtxRelease)        \
  X(cuCtxSetCurrent)                  \
  X(cuCtxSynchronize)                 \
  X(cuModuleLoadData)                 \
  X(cuModuleUnload)                   \
  X(cuModuleGetFunction)              \
  X(cuFuncSetAttribute)               \
  X(cuLaunchKernelEx)                 \
  X(cuMemAlloc)                       \
  X(cuMemFree)                        \
  X(cuMemcpyHtoD)                     \
  X(cuMemcpyDtoH)                     \
  X(cuMemsetD8)                       \
  X(cuTensorMapEncodeTiled)           \
  X(cuEventCreate)                    \
  X(cuEventDestroy)                   \
  X(cuEventRecord)                    \
  X(cuEventSynchronize)               \
  X(cuEventElapsedTime)

struct CudaDriverApi {
#define MGPU_DECLARE_PTR(fn) decltype(&::fn) fn = nullptr;
  MGPU_CUDA_DRIVER_FUNCTIONS(MGPU_DECLARE_PTR)
#undef MGPU_DECLARE_PTR
};

// A driver call that failed, with the driver's code: callers tell faults (the context is
// lost: illegal address, illegal instruction, ...) from ordinary launch errors by it.
class CudaError : public Error {
 public:
  CudaError(ErrorKind kind, const std::string& message, CUresult code) : Error(kind, message), code_(code) {}
  CUresult code() const { return code_; }
  bool is_fault() const;  // the context is unusable after this error

 private:
  CUresult code_;
};

class CudaDriver {
 public:
  static const CudaDriver& get();

  const CudaDriverApi& api() const { return api_; }
  int version() const { return version_; }  // e.g. 13000 for a driver that supports CUDA 13.0
  // The virtual device (core/emu) instead of a GPU: it runs PTX, has no clock, and reports
  // what its checkers found in the last launch (JSON, empty on a GPU).
  bool emulated() const { return emu_last_launch_ != nullptr; }
  std::string last_emulated_launch() const;
  void check(CUresult result, std::string_view call, ErrorKind kind = ErrorKind::Launch) const;

 private:
  explicit CudaDriver(DynamicLibrary lib);
  DynamicLibrary lib_;
  CudaDriverApi api_;
  int version_ = 0;
  CUresult (*emu_last_launch_)(const char**) = nullptr;
};

}  // namespace mgpu::core
