// libmgpu_mlir_runtime.so: MLIR's CUDA runtime-wrapper ABI (the mgpu* functions that the
// gpu-to-llvm lowering calls and mlir-runner programs link against) over the CUDA driver API,
// so a gpu-dialect program lowered with -gpu-lower-to-nvvm-pipeline runs on a GPU or on the
// virtual device (core/emu) alike.
//
// The driver is never linked: it is opened at first use with dlopen from $MGPU_CUDA_DRIVER
// (default libcuda.so.1) and every entry point comes from its cuGetProcAddress at this
// header's CUDA_VERSION, so each pointer has the prototype <cuda.h> declares. When the driver
// answers for mgpuEmuLastLaunch it is the virtual device.
//
// Differences from upstream's wrappers, on purpose:
//  - A failing driver call prints the call, the driver's error name (and, on the virtual
//    device, mgpuEmuLastError's reason) to stderr and exits with status 1: a conformance
//    program must not go on computing with a lost context. MGPU_MLIR_ON_ERROR=continue only
//    reports, as upstream does.
//  - After every launch on the virtual device the checkers' findings (mgpuEmuLastLaunch) are
//    printed to stderr and the process exits with status 2 when there is any, so a test whose
//    kernel races, deadlocks or misuses an mbarrier fails even when its output looks right.
//    MGPU_MLIR_FINDINGS=warn only prints them.
//  - mgpuMemcpy asks cuPointerGetAttribute which side each pointer is on and picks the
//    HtoD/DtoH/DtoD copy (the virtual device has its own address space, so the unified
//    cuMemcpyAsync cannot be used there); a driver without it gets cuMemcpyAsync.
//  - Host registration (mgpuMemHostRegister*, gpu.host_register) is cuMemHostRegister and a
//    host-shared allocation (gpu.alloc host_shared) is cuMemAllocManaged, on a GPU and on the
//    virtual device alike (which maps such memory at its host address, as unified addressing
//    does): a driver without them fails loudly, naming the call.
//  - mgpuTensorMapEncodeTiledMemref honours the memref's offset and refuses a non-unit
//    innermost stride instead of encoding a wrong map.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#define MGPU_RT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// X(name) for the entry points every driver must have; Y(name) for those that may be missing.
#define MGPU_RT_REQUIRED(X)                                                                                   \
  X(cuInit) X(cuGetErrorName) X(cuDeviceGet) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain)             \
  X(cuCtxSetCurrent) X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)       \
  X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuStreamCreate) X(cuStreamDestroy)            \
  X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventDestroy) X(cuEventSynchronize)        \
  X(cuEventRecord) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) \
  X(cuMemcpyAsync) X(cuMemcpyHtoD) X(cuMemsetD32Async) X(cuTensorMapEncodeTiled)
#define MGPU_RT_OPTIONAL(Y) \
  Y(cuMemsetD16Async) Y(cuPointerGetAttribute) Y(cuMemHostRegister) Y(cuMemHostUnregister) Y(cuMemAllocManaged)

using EmuQueryFn = CUresult (*)(const char**);

struct Driver {
#define MGPU_RT_DECLARE(fn) decltype(&::fn) fn = nullptr;
  MGPU_RT_REQUIRED(MGPU_RT_DECLARE)
  MGPU_RT_OPTIONAL(MGPU_RT_DECLARE)
#undef MGPU_RT_DECLARE
  EmuQueryFn emu_last_launch = nullptr;  // the virtual device's extensions; null on a GPU
  EmuQueryFn emu_last_error = nullptr;
  std::string path;
  CUcontext context = nullptr;
  std::mutex mu;                              // guards names
  std::map<CUfunction, std::string> names;    // kernel names, for messages
  bool emulated() const { return emu_last_launch != nullptr; }
};

[[noreturn]] void die(const std::string& message, int status = 1) {
  std::fflush(stdout);
  std::fprintf(stderr, "mgpu-mlir-runtime: %s\n", message.c_str());
  std::fflush(stderr);
  // _Exit, not exit: the call may come from a worker thread of the async runtime, and exit()
  // would run the static destructors -- the runtime's thread pool joining its workers, this one
  // among them -- and hang (an LLVM program whose driver call failed on a worker never ended).
  std::_Exit(status);
}

int32_t& default_device() {
  static int32_t device = 0;
  return device;
}

Driver& load_driver() {
  static Driver* d = [] {
    auto* drv = new Driver;
    const char* chosen = std::getenv("MGPU_CUDA_DRIVER");
    drv->path = chosen && *chosen ? chosen : "libcuda.so.1";
    void* lib = dlopen(drv->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("cannot load the CUDA driver " + drv->path + " (" + dlerror() + "); set MGPU_CUDA_DRIVER");
    auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress)>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get_proc) die(drv->path + " has no cuGetProcAddress_v2 (a CUDA 12+ driver is needed)");
    auto resolve = [&](const char* name, void** slot, bool required) {
      CUdriverProcAddressQueryResult status{};
      CUresult r = get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) *slot = nullptr;
      if (required && !*slot) die(drv->path + " lacks " + name);
    };
#define MGPU_RT_LOAD_REQUIRED(fn) resolve(#fn, reinterpret_cast<void**>(&drv->fn), true);
#define MGPU_RT_LOAD_OPTIONAL(fn) resolve(#fn, reinterpret_cast<void**>(&drv->fn), false);
    MGPU_RT_REQUIRED(MGPU_RT_LOAD_REQUIRED)
    MGPU_RT_OPTIONAL(MGPU_RT_LOAD_OPTIONAL)
#undef MGPU_RT_LOAD_REQUIRED
#undef MGPU_RT_LOAD_OPTIONAL
    resolve("mgpuEmuLastLaunch", reinterpret_cast<void**>(&drv->emu_last_launch), false);
    resolve("mgpuEmuLastError", reinterpret_cast<void**>(&drv->emu_last_error), false);
    return drv;
  }();
  return *d;
}

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  Driver& d = load_driver();
  const char* name = nullptr;
  d.cuGetErrorName(r, &name);
  std::string msg = std::string("'") + call + "' failed with '" + (name ? name : "<unknown>") + "'";
  const char* why = nullptr;
  if (d.emu_last_error && d.emu_last_error(&why) == CUDA_SUCCESS && why && *why) msg += std::string(": ") + why;
  const char* mode = std::getenv("MGPU_MLIR_ON_ERROR");
  if (mode && std::strcmp(mode, "continue") == 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "mgpu-mlir-runtime: %s\n", msg.c_str());
    return;
  }
  die(msg);
}

#define CHECK(expr) check((expr), #expr)

// The driver with the primary context of the default device current on this thread.
Driver& driver() {
  Driver& d = load_driver();
  static std::once_flag once;
  std::call_once(once, [&] {
    CHECK(d.cuInit(0));
    CUdevice dev = 0;
    CHECK(d.cuDeviceGet(&dev, default_device()));
    CHECK(d.cuDevicePrimaryCtxRetain(&d.context, dev));
  });
  thread_local bool current = false;
  if (!current) {
    CHECK(d.cuCtxSetCurrent(d.context));
    current = true;
  }
  return d;
}

// The checkers' findings of the last launch on the virtual device: printed, and fatal unless
// MGPU_MLIR_FINDINGS=warn. A GPU's driver has no findings to give.
void report_findings(Driver& d, CUfunction f) {
  if (!d.emulated()) return;
  const char* json = nullptr;
  if (d.emu_last_launch(&json) != CUDA_SUCCESS || !json) return;
  const char* reports = std::strstr(json, "\"reports\":[");
  if (!reports || reports[std::strlen("\"reports\":[")] == ']') return;
  std::string name;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    auto it = d.names.find(f);
    name = it == d.names.end() ? "?" : it->second;
  }
  std::fflush(stdout);
  std::string list = reports + std::strlen("\"reports\":");
  if (!list.empty() && list.back() == '}') list.pop_back();  // the launch object's closing brace
  std::fprintf(stderr, "mgpu-mlir-runtime: the virtual device's checkers reported findings for kernel '%s': %s\n", name.c_str(),
               list.c_str());
  const char* mode = std::getenv("MGPU_MLIR_FINDINGS");
  if (!(mode && std::strcmp(mode, "warn") == 0)) die("exiting because of the findings above (MGPU_MLIR_FINDINGS=warn to go on)", 2);
}

void set_dynamic_smem(Driver& d, CUfunction f, int32_t smem) {
  // Kernels may use at most 48 KiB of dynamic shared memory unless they opt in.
  if (smem <= 48 * 1024) return;
  CUdevice dev = 0;
  CHECK(d.cuDeviceGet(&dev, default_device()));
  int max_smem = 0;
  CHECK(d.cuDeviceGetAttribute(&max_smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  if (smem > max_smem)
    die("the launch asks for " + std::to_string(smem) + " bytes of dynamic shared memory; the device allows " + std::to_string(max_smem));
  CHECK(d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
}

bool on_device(Driver& d, const void* p) {
  unsigned int type = 0;
  return d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS &&
         type == CU_MEMORYTYPE_DEVICE;
}

[[noreturn]] void no_host_memory(const Driver& d, const char* what, const char* entry) {
  die(std::string(what) + ": " + d.path + " lacks " + entry +
      ", so host memory cannot be made visible to kernels; allocate with gpu.alloc and copy with gpu.memcpy instead");
}

int element_bytes(int64_t dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: case CU_TENSOR_MAP_DATA_TYPE_FLOAT16: case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32: case CU_TENSOR_MAP_DATA_TYPE_INT32: case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64: case CU_TENSOR_MAP_DATA_TYPE_INT64: case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;
  }
}

}  // namespace

// Modules. With cubin-format=isa the lowering embeds NUL-terminated PTX and calls the JIT
// variant; the other formats call mgpuModuleLoad with the binary and its size.
MGPU_RT_EXPORT CUmodule mgpuModuleLoad(void* data, size_t /*size*/) {
  Driver& d = driver();
  CUmodule m = nullptr;
  CHECK(d.cuModuleLoadData(&m, data));
  return m;
}

MGPU_RT_EXPORT CUmodule mgpuModuleLoadJIT(void* data, int opt_level) {
  Driver& d = driver();
  CUmodule m = nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {log, reinterpret_cast<void*>(sizeof log), reinterpret_cast<void*>(static_cast<intptr_t>(opt_level))};
  CUresult r = d.cuModuleLoadDataEx(&m, data, 3, options, values);
  if (r != CUDA_SUCCESS && log[0]) std::fprintf(stderr, "mgpu-mlir-runtime: JIT error log:\n%s\n", log);
  CHECK(r);
  return m;
}

MGPU_RT_EXPORT void mgpuModuleUnload(CUmodule m) { CHECK(driver().cuModuleUnload(m)); }

MGPU_RT_EXPORT CUfunction mgpuModuleGetFunction(CUmodule m, const char* name) {
  Driver& d = driver();
  CUfunction f = nullptr;
  CHECK(d.cuModuleGetFunction(&f, m, name));
  std::lock_guard<std::mutex> lock(d.mu);
  d.names[f] = name;
  return f;
}

// Launches: MLIR passes the index-typed sizes as intptr_t.
MGPU_RT_EXPORT void mgpuLaunchKernel(CUfunction f, intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx, intptr_t by, intptr_t bz,
                                     int32_t smem, CUstream stream, void** params, void** extra, size_t /*param_count*/) {
  Driver& d = driver();
  set_dynamic_smem(d, f, smem);
  CUresult r = d.cuLaunchKernel(f, static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz),
                                static_cast<unsigned>(bx), static_cast<unsigned>(by), static_cast<unsigned>(bz),
                                static_cast<unsigned>(smem), stream, params, extra);
  report_findings(d, f);
  CHECK(r);
}

MGPU_RT_EXPORT void mgpuLaunchClusterKernel(CUfunction f, intptr_t cx, intptr_t cy, intptr_t cz, intptr_t gx, intptr_t gy,
                                            intptr_t gz, intptr_t bx, intptr_t by, intptr_t bz, int32_t smem, CUstream stream,
                                            void** params, void** extra, size_t /*param_count*/) {
  Driver& d = driver();
  set_dynamic_smem(d, f, smem);
  CUlaunchAttribute attr[1];
  attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr[0].value.clusterDim.x = static_cast<unsigned>(cx);
  attr[0].value.clusterDim.y = static_cast<unsigned>(cy);
  attr[0].value.clusterDim.z = static_cast<unsigned>(cz);
  CUlaunchConfig c{};
  c.gridDimX = static_cast<unsigned>(gx);
  c.gridDimY = static_cast<unsigned>(gy);
  c.gridDimZ = static_cast<unsigned>(gz);
  c.blockDimX = static_cast<unsigned>(bx);
  c.blockDimY = static_cast<unsigned>(by);
  c.blockDimZ = static_cast<unsigned>(bz);
  c.sharedMemBytes = static_cast<unsigned>(smem);
  c.hStream = stream;
  c.attrs = attr;
  c.numAttrs = 1;
  CUresult r = d.cuLaunchKernelEx(&c, f, params, extra);
  report_findings(d, f);
  CHECK(r);
}

// Streams and events.
MGPU_RT_EXPORT CUstream mgpuStreamCreate() {
  Driver& d = driver();
  CUstream s = nullptr;
  CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}
MGPU_RT_EXPORT void mgpuStreamDestroy(CUstream s) { CHECK(driver().cuStreamDestroy(s)); }
MGPU_RT_EXPORT void mgpuStreamSynchronize(CUstream s) { CHECK(driver().cuStreamSynchronize(s)); }
MGPU_RT_EXPORT void mgpuStreamWaitEvent(CUstream s, CUevent e) { CHECK(driver().cuStreamWaitEvent(s, e, 0)); }
MGPU_RT_EXPORT CUevent mgpuEventCreate() {
  Driver& d = driver();
  CUevent e = nullptr;
  CHECK(d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  return e;
}
MGPU_RT_EXPORT void mgpuEventDestroy(CUevent e) { CHECK(driver().cuEventDestroy(e)); }
MGPU_RT_EXPORT void mgpuEventSynchronize(CUevent e) { CHECK(driver().cuEventSynchronize(e)); }
MGPU_RT_EXPORT void mgpuEventRecord(CUevent e, CUstream s) { CHECK(driver().cuEventRecord(e, s)); }

// Memory.
MGPU_RT_EXPORT void* mgpuMemAlloc(uint64_t bytes, CUstream /*stream*/, bool host_shared) {
  Driver& d = driver();
  CUdeviceptr p = 0;
  if (host_shared) {
    if (!d.cuMemAllocManaged) no_host_memory(d, "gpu.alloc host_shared (mgpuMemAlloc)", "cuMemAllocManaged");
    CHECK(d.cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL));
  } else {
    CHECK(d.cuMemAlloc(&p, bytes));
  }
  return reinterpret_cast<void*>(p);
}

MGPU_RT_EXPORT void mgpuMemFree(void* p, CUstream /*stream*/) { CHECK(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p))); }

MGPU_RT_EXPORT void mgpuMemcpy(void* dst, void* src, size_t bytes, CUstream stream) {
  Driver& d = driver();
  if (!d.cuPointerGetAttribute) {
    CHECK(d.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes, stream));
    return;
  }
  const bool dst_dev = on_device(d, dst), src_dev = on_device(d, src);
  if (dst_dev && src_dev) {
    CHECK(d.cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes, stream));
  } else if (dst_dev) {
    CHECK(d.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream));
  } else if (src_dev) {
    CHECK(d.cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream));
  } else {
    // Host to host, in stream order.
    CHECK(d.cuStreamSynchronize(stream));
    std::memmove(dst, src, bytes);
  }
}

MGPU_RT_EXPORT void mgpuMemset32(void* dst, unsigned int value, size_t count, CUstream stream) {
  CHECK(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count, stream));
}

MGPU_RT_EXPORT void mgpuMemset16(void* dst, unsigned short value, size_t count, CUstream stream) {
  Driver& d = driver();
  if (!d.cuMemsetD16Async) die(d.path + " lacks cuMemsetD16Async (mgpuMemset16)");
  CHECK(d.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count, stream));
}

// Host registration: the memory becomes device-accessible at its host address (unified
// addressing), as upstream's wrappers assume.
MGPU_RT_EXPORT void mgpuMemHostRegister(void* p, uint64_t bytes) {
  Driver& d = driver();
  if (!d.cuMemHostRegister) no_host_memory(d, "mgpuMemHostRegister (gpu.host_register)", "cuMemHostRegister");
  CHECK(d.cuMemHostRegister(p, bytes, 0));
}

// descriptor: a ranked memref descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
MGPU_RT_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void* descriptor, int64_t element_bytes) {
  auto* words = static_cast<int64_t*>(descriptor);
  char* aligned = reinterpret_cast<char*>(words[1]);
  const int64_t offset = words[2], *sizes = words + 3, *strides = words + 3 + rank;
  int64_t dense = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    if (strides[i] != dense) die("mgpuMemHostRegisterMemRef: only densely packed memrefs can be registered");
    dense *= sizes[i];
  }
  mgpuMemHostRegister(aligned + offset * element_bytes, static_cast<uint64_t>(dense * element_bytes));
}

MGPU_RT_EXPORT void mgpuMemHostUnregister(void* p) {
  Driver& d = driver();
  if (!d.cuMemHostUnregister) no_host_memory(d, "mgpuMemHostUnregister (gpu.host_unregister)", "cuMemHostUnregister");
  CHECK(d.cuMemHostUnregister(p));
}

MGPU_RT_EXPORT void mgpuMemHostUnregisterMemRef(int64_t /*rank*/, void* descriptor, int64_t element_bytes) {
  auto* words = static_cast<int64_t*>(descriptor);
  mgpuMemHostUnregister(reinterpret_cast<char*>(words[1]) + words[2] * element_bytes);
}

MGPU_RT_EXPORT void mgpuSetDefaultDevice(int32_t device) { default_device() = device; }

// Tensor maps (TMA).
MGPU_RT_EXPORT void mgpuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* address,
                                             const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                             const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  CHECK(driver().cuTensorMapEncodeTiled(map, dtype, rank, address, dims, strides, box, element_strides, interleave, swizzle, l2,
                                        oob));
}

// The memref's sizes and strides (outermost first) as the driver wants them (innermost first,
// strides in bytes, without the innermost which must be 1). Returns the tensor's address.
namespace {
void* memref_data_and_shape(void* descriptor, int64_t rank, int element_size, cuuint64_t* dims,
                                               cuuint64_t* strides) {
  auto* words = static_cast<int64_t*>(descriptor);
  char* aligned = reinterpret_cast<char*>(words[1]);
  const int64_t offset = words[2], *sizes = words + 3, *mstrides = words + 3 + rank;
  if (mstrides[rank - 1] != 1) die("mgpuTensorMapEncodeTiledMemref: the memref's innermost stride must be 1 for a tiled tensor map");
  for (int64_t i = 0; i < rank; ++i) dims[i] = static_cast<cuuint64_t>(sizes[rank - 1 - i]);
  for (int64_t i = 0; i + 1 < rank; ++i) strides[i] = static_cast<cuuint64_t>(mstrides[rank - 2 - i] * element_size);
  return aligned + offset * element_size;
}
}  // namespace

// Encodes a tensor map over a device memref with the given box (outermost first, as in the
// memref) and returns it copied to device memory, where a kernel parameter can point at it.
MGPU_RT_EXPORT void* mgpuTensorMapEncodeTiledMemref(int64_t rank, void* descriptor, int64_t dtype, int64_t interleave,
                                                    int64_t swizzle, int64_t l2, int64_t oob, int64_t* box_dims) {
  if (rank < 1 || rank > 5) die("mgpuTensorMapEncodeTiledMemref: rank " + std::to_string(rank) + " outside 1..5");
  const int esize = element_bytes(dtype);
  if (!esize) die("mgpuTensorMapEncodeTiledMemref: unknown tensor map data type " + std::to_string(dtype));
  cuuint64_t dims[5] = {1, 1, 1, 1, 1}, strides[5] = {0, 0, 0, 0, 0};
  cuuint32_t box[5] = {1, 1, 1, 1, 1}, element_strides[5] = {1, 1, 1, 1, 1};
  void* address = memref_data_and_shape(descriptor, rank, esize, dims, strides);
  for (int64_t i = 0; i < rank; ++i) box[i] = static_cast<cuuint32_t>(box_dims[rank - 1 - i]);
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  mgpuTensorMapEncodeTiled(&map, static_cast<CUtensorMapDataType>(dtype), static_cast<cuuint32_t>(rank), address, dims, strides, box,
                           element_strides, static_cast<CUtensorMapInterleave>(interleave), static_cast<CUtensorMapSwizzle>(swizzle),
                           static_cast<CUtensorMapL2promotion>(l2), static_cast<CUtensorMapFloatOOBfill>(oob));
  Driver& d = driver();
  CUdeviceptr on_dev = 0;
  CHECK(d.cuMemAlloc(&on_dev, sizeof map));
  CHECK(d.cuMemcpyHtoD(on_dev, &map, sizeof map));
  return reinterpret_cast<void*>(on_dev);
}
