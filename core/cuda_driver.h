// The CUDA driver API, opened at run time from libcuda.so.1 (never linked), so mgpu-tune runs
// on machines without a driver. Contract: CudaDriver::get() loads the library and calls
// cuInit(0) once per process; when there is no driver or no usable GPU it throws
// Error{Unavailable} with a one-line reason (the same reason on every later call), and when
// the virtual device (MGPU_CUDA_DRIVER=libmgpu_vcuda.so) refuses a setting of its own
// (MGPU_EMU_ARCH) Error{InvalidInput} with its reason, naming the variable.
// check() turns a CUresult into an Error of the given kind naming the call and the driver's
// error name. Each entry point comes from cuGetProcAddress at the version its listed prototype
// (cudaTypedefs.h) belongs to, so the pointer's type is exactly the ABI the driver returns.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>
#include <string_view>

#include "core/dynlib.h"
#include "core/error.h"

namespace mgpu::core {

// X(name, version) for every driver entry point mgpu-tune uses, with the CUDA version whose
// prototype we call. The pointer's type is cudaTypedefs.h's PFN_name_vVERSION and the driver is
// asked for exactly that version: asking at the header's CUDA_VERSION instead hands back the
// newest ABI, which need not match <cuda.h>'s plain declaration (CUDA 13.0 made
// cuCtxSynchronize take a context; calling it with none synchronized a garbage handle, and
// every launch on the H100 reported CUDA_ERROR_CONTEXT_IS_DESTROYED).
#define MGPU_CUDA_DRIVER_FUNCTIONS(X)   \
  X(cuInit, 2000)                       \
  X(cuDriverGetVersion, 2020)           \
  X(cuGetErrorName, 6000)               \
  X(cuGetErrorString, 6000)             \
  X(cuDeviceGetCount, 2000)             \
  X(cuDeviceGet, 2000)                  \
  X(cuDeviceGetName, 2000)              \
  X(cuDeviceGetAttribute, 2000)         \
  X(cuDeviceTotalMem, 3020)             \
  X(cuDevicePrimaryCtxRetain, 7000)     \
  X(cuDevicePrimaryCtxRelease, 11000)   \
  X(cuCtxSetCurrent, 4000)              \
  X(cuCtxSynchronize, 13000)            \
  X(cuModuleLoadData, 2000)             \
  X(cuModuleUnload, 2000)               \
  X(cuModuleGetFunction, 2000)          \
  X(cuFuncSetAttribute, 9000)           \
  X(cuLaunchKernelEx, 11060)            \
  X(cuMemAlloc, 3020)                   \
  X(cuMemFree, 3020)                    \
  X(cuMemcpyHtoD, 3020)                 \
  X(cuMemcpyDtoH, 3020)                 \
  X(cuMemsetD8, 3020)                   \
  X(cuTensorMapEncodeTiled, 12000)      \
  X(cuEventCreate, 2000)                \
  X(cuEventDestroy, 4000)               \
  X(cuEventRecord, 2000)                \
  X(cuEventSynchronize, 2000)           \
  X(cuEventElapsedTime, 12080)

struct CudaDriverApi {
#define MGPU_DECLARE_PTR(fn, version) PFN_##fn##_v##version fn = nullptr;
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
