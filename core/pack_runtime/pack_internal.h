/* What a kernel pack's runtime shares between its ops (C11; not part of the pack's ABI): the
 * compiled kernels the generated tables.c lists, the calling thread's last failure, and the
 * CUDA driver, opened at run time ($MGPU_CUDA_DRIVER, else libcuda.so.1) with every entry point
 * resolved at the CUDA version whose prototype is called here, as mgpu-tune itself does
 * (core/cuda_driver.h): the driver's newest ABI need not be <cuda.h>'s declaration. */
#ifndef MGPU_PACK_INTERNAL_H
#define MGPU_PACK_INTERNAL_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "mgpu_pack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A 2-D TMA descriptor of a kernel: element type, which of the op's sizes give its rows and its
 * (contiguous) columns, its box and swizzle. A tensor is dense: a row is cols elements. */
typedef struct {
  int32_t element; /* mgpu_dtype */
  int32_t rows_of, cols_of; /* indices into the op's sizes (matmul: 0 M, 1 N, 2 K) */
  uint32_t box_rows, box_cols;
  int32_t swizzle_bytes; /* 0 (none), 32, 64 or 128 */
} mgpu_pk_map;

/* One compiled kernel: its PTX (what the virtual device loads) and cubin (what a GPU loads), and
 * its launch shape. Its arguments are the descriptors' addresses, then a workspace pointer when it
 * takes one, then the op's scalars. */
typedef struct {
  const char* name;
  const char* arch;
  int cc_major, cc_minor;
  const unsigned char* ptx;
  size_t ptx_size;
  const unsigned char* cubin;
  size_t cubin_size;
  int block_threads, cluster_size, dynamic_smem_bytes, takes_workspace;
  int map_count;
  mgpu_pk_map maps[4];
} mgpu_pk_kernel;

typedef struct {
  const mgpu_pk_kernel* kernels;
  int kernel_count;
  const mgpu_pack_entry_info* infos;
  int info_count;
} mgpu_pk_common_tables;

const mgpu_pk_common_tables* mgpu_pk_common(void); /* defined by the generated tables */

/* Record the calling thread's failure and return `status`. */
mgpu_status mgpu_pk_fail(mgpu_status status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
mgpu_status mgpu_pk_cuda_fail(CUresult result, const char* call);

/* The calling thread's current context and its device. */
typedef struct {
  CUcontext context;
  unsigned long long context_id; /* cuCtxGetId: unique to this creation of the context */
  int cc_major, cc_minor, sm_count;
  int virtual_device; /* the virtual device (it loads PTX, not cubins) */
} mgpu_pk_device;
mgpu_status mgpu_pk_current_device(mgpu_pk_device* device);

/* The descriptor of map `map` over `base`, its sizes taken from `sizes`. */
mgpu_status mgpu_pk_encode_map(const mgpu_pk_map* map, const int64_t* sizes, const void* base, CUtensorMap* out);
mgpu_status mgpu_pk_upload(CUdeviceptr to, const void* from, size_t bytes, CUstream stream);
mgpu_status mgpu_pk_zero(CUdeviceptr to, size_t bytes, CUstream stream);
/* Launches kernel `kernel` (loaded into the device's context on first use) on `grid_x` blocks. */
mgpu_status mgpu_pk_launch(const mgpu_pk_device* device, int kernel, unsigned grid_x, void** args, CUstream stream);

/* The architecture name of a compute capability the pack knows ("sm_90a"), or NULL. */
const char* mgpu_pk_arch_of(int cc_major, int cc_minor);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PACK_INTERNAL_H */
