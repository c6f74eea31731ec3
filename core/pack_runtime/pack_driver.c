/* The CUDA driver of a pack: opened once, at run time, so the pack builds and links without a
 * GPU or libcuda; the current context's device; descriptors; each kernel loaded into a context on
 * its first launch there (PTX on the virtual device, which loads no cubin; the cubin on a GPU). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudaTypedefs.h>

#include "pack_internal.h"

/* X(name, version): the version whose prototype is called (cudaTypedefs.h's PFN_name_vVERSION). */
#define MGPU_PK_DRIVER(X)                                                                              \
  X(cuInit, 2000) X(cuCtxGetCurrent, 4000) X(cuCtxGetDevice, 2000) X(cuCtxGetId, 12000) X(cuDeviceGetAttribute, 2000)        \
  X(cuModuleLoadData, 2000) X(cuModuleGetFunction, 2000) X(cuFuncSetAttribute, 9000)                    \
  X(cuLaunchKernelEx, 11060) X(cuTensorMapEncodeTiled, 12000) X(cuMemcpyHtoDAsync, 3020)                \
  X(cuMemsetD8Async, 3020)

static struct {
#define MGPU_PK_PTR(fn, version) PFN_##fn##_v##version fn;
  MGPU_PK_DRIVER(MGPU_PK_PTR)
#undef MGPU_PK_PTR
  int virtual_device;
  char why[400]; /* why the driver is unavailable; empty when it loaded */
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void open_driver(void) {
  const char* path = getenv("MGPU_CUDA_DRIVER");
  if (!path || !*path) path = "libcuda.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(drv.why, sizeof drv.why, "cannot load the CUDA driver %s: %s", path, dlerror());
    return;
  }
  /* ISO C converts no object pointer to a function pointer: the bytes are copied. */
  PFN_cuGetProcAddress_v12000 get = NULL;
  void* symbol = dlsym(lib, "cuGetProcAddress_v2");
  memcpy(&get, &symbol, sizeof get);
  if (!get) {
    snprintf(drv.why, sizeof drv.why, "the CUDA driver %s has no cuGetProcAddress_v2 (CUDA 12 or newer is needed)", path);
    return;
  }
  CUdriverProcAddressQueryResult found;
  void* fn;
#define MGPU_PK_RESOLVE(name, version)                                                                         \
  fn = NULL;                                                                                                   \
  if (get(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || !fn) {                  \
    snprintf(drv.why, sizeof drv.why, "the CUDA driver %s has no %s (as of CUDA %d)", path, #name, version);   \
    return;                                                                                                    \
  }                                                                                                            \
  memcpy(&drv.name, &fn, sizeof fn);
  MGPU_PK_DRIVER(MGPU_PK_RESOLVE)
#undef MGPU_PK_RESOLVE
  fn = NULL;
  drv.virtual_device = get("mgpuEmuLastLaunch", &fn, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS && fn;
  CUresult r = drv.cuInit(0);
  if (r != CUDA_SUCCESS) snprintf(drv.why, sizeof drv.why, "cuInit of the CUDA driver %s failed: CUDA error %d", path, (int)r);
}

static mgpu_status driver_ready(void) {
  pthread_once(&drv_once, open_driver);
  return drv.why[0] ? mgpu_pk_fail(MGPU_ERR_DRIVER_UNAVAILABLE, "%s", drv.why) : MGPU_OK;
}

mgpu_status mgpu_pk_current_device(mgpu_pk_device* device) {
  mgpu_status s = driver_ready();
  if (s != MGPU_OK) return s;
  CUcontext ctx = NULL;
  CUresult r = drv.cuCtxGetCurrent(&ctx);
  if (r != CUDA_SUCCESS) return mgpu_pk_cuda_fail(r, "cuCtxGetCurrent");
  if (!ctx) return mgpu_pk_fail(MGPU_ERR_NO_CONTEXT, "the calling thread has no current CUDA context");
  CUdevice dev;
  r = drv.cuCtxGetDevice(&dev);
  /* Bound to a context released since: CUDA_ERROR_CONTEXT_IS_DESTROYED (a primary context not
     retained again), or CUDA_ERROR_INVALID_CONTEXT where a driver says so. */
  if (r == CUDA_ERROR_INVALID_CONTEXT || r == CUDA_ERROR_CONTEXT_IS_DESTROYED)
    return mgpu_pk_fail(MGPU_ERR_NO_CONTEXT, "the current CUDA context is not live (released or destroyed)");
  if (r != CUDA_SUCCESS) return mgpu_pk_cuda_fail(r, "cuCtxGetDevice");
  device->context = ctx;
  if ((r = drv.cuCtxGetId(ctx, &device->context_id)) != CUDA_SUCCESS) return mgpu_pk_cuda_fail(r, "cuCtxGetId");
  device->virtual_device = drv.virtual_device;
  if ((r = drv.cuDeviceGetAttribute(&device->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)) != CUDA_SUCCESS ||
      (r = drv.cuDeviceGetAttribute(&device->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)) != CUDA_SUCCESS ||
      (r = drv.cuDeviceGetAttribute(&device->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)) != CUDA_SUCCESS)
    return mgpu_pk_cuda_fail(r, "cuDeviceGetAttribute");
  return MGPU_OK;
}

static int element_bytes(int32_t element) { return element == MGPU_F32 ? 4 : 2; }

mgpu_status mgpu_pk_encode_map(const mgpu_pk_map* map, const int64_t* sizes, const void* base, CUtensorMap* out) {
  const cuuint64_t rows = (cuuint64_t)sizes[map->rows_of], cols = (cuuint64_t)sizes[map->cols_of];
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {cols * (cuuint64_t)element_bytes(map->element)};
  cuuint32_t box[2] = {map->box_cols, map->box_rows};
  cuuint32_t element_strides[2] = {1, 1};
  CUtensorMapDataType type = map->element == MGPU_BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                             : map->element == MGPU_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  CUtensorMapSwizzle swizzle = map->swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : map->swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : map->swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                          : CU_TENSOR_MAP_SWIZZLE_NONE;
  CUresult r = drv.cuTensorMapEncodeTiled(out, type, 2, (void*)base, dims, strides, box, element_strides,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? MGPU_OK : mgpu_pk_cuda_fail(r, "cuTensorMapEncodeTiled");
}

mgpu_status mgpu_pk_upload(CUdeviceptr to, const void* from, size_t bytes, CUstream stream) {
  CUresult r = drv.cuMemcpyHtoDAsync(to, from, bytes, stream);
  return r == CUDA_SUCCESS ? MGPU_OK : mgpu_pk_cuda_fail(r, "cuMemcpyHtoDAsync");
}

mgpu_status mgpu_pk_zero(CUdeviceptr to, size_t bytes, CUstream stream) {
  CUresult r = drv.cuMemsetD8Async(to, 0, bytes, stream);
  return r == CUDA_SUCCESS ? MGPU_OK : mgpu_pk_cuda_fail(r, "cuMemsetD8Async");
}

/* The kernels loaded, per context: a list, searched under a lock (a handful of entries). A
 * context is known by its id, not its handle: a primary context released to nothing and retained
 * again keeps its handle but has none of the modules loaded before (battery round 17, F9). */
typedef struct loaded {
  unsigned long long context_id;
  int kernel;
  CUfunction function;
  struct loaded* next;
} loaded;
static loaded* loaded_list;
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;

static mgpu_status function_of(const mgpu_pk_device* device, int kernel, CUfunction* out) {
  const mgpu_pk_kernel* k = &mgpu_pk_common()->kernels[kernel];
  mgpu_status s = MGPU_OK;
  pthread_mutex_lock(&loaded_lock);
  for (loaded* l = loaded_list; l; l = l->next)
    if (l->context_id == device->context_id && l->kernel == kernel) {
      *out = l->function;
      pthread_mutex_unlock(&loaded_lock);
      return MGPU_OK;
    }
  CUmodule module;
  CUfunction fn = NULL;
  CUresult r = drv.cuModuleLoadData(&module, device->virtual_device ? (const void*)k->ptx : (const void*)k->cubin);
  if (r != CUDA_SUCCESS) s = mgpu_pk_cuda_fail(r, "cuModuleLoadData");
  else if ((r = drv.cuModuleGetFunction(&fn, module, k->name)) != CUDA_SUCCESS) s = mgpu_pk_cuda_fail(r, "cuModuleGetFunction");
  else if ((r = drv.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->dynamic_smem_bytes)) !=
           CUDA_SUCCESS)
    s = mgpu_pk_cuda_fail(r, "cuFuncSetAttribute");
  else if (k->cluster_size > 8 &&
           (r = drv.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)) != CUDA_SUCCESS)
    s = mgpu_pk_cuda_fail(r, "cuFuncSetAttribute");
  if (s == MGPU_OK) {
    loaded* l = malloc(sizeof *l);
    if (!l) {
      s = mgpu_pk_fail(MGPU_ERR_CUDA, "out of host memory");
    } else {
      l->context_id = device->context_id;
      l->kernel = kernel;
      l->function = fn;
      l->next = loaded_list;
      loaded_list = l;
      *out = fn;
    }
  }
  pthread_mutex_unlock(&loaded_lock);
  return s;
}

mgpu_status mgpu_pk_launch(const mgpu_pk_device* device, int kernel, unsigned grid_x, void** args, CUstream stream) {
  const mgpu_pk_kernel* k = &mgpu_pk_common()->kernels[kernel];
  CUfunction fn = NULL;
  mgpu_status s = function_of(device, kernel, &fn);
  if (s != MGPU_OK) return s;
  CUlaunchAttribute cluster;
  memset(&cluster, 0, sizeof cluster);
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = (unsigned)k->cluster_size;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig config;
  memset(&config, 0, sizeof config);
  config.gridDimX = grid_x;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = (unsigned)k->block_threads;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = (unsigned)k->dynamic_smem_bytes;
  config.hStream = stream;
  config.attrs = k->cluster_size > 1 ? &cluster : NULL;
  config.numAttrs = k->cluster_size > 1 ? 1 : 0;
  CUresult r = drv.cuLaunchKernelEx(&config, fn, args, NULL);
  return r == CUDA_SUCCESS ? MGPU_OK : mgpu_pk_cuda_fail(r, "cuLaunchKernelEx");
}
