/* mgpu_pack.h -- the C ABI of a kernel pack exported by mgpu-tune (export --format pack): tuned
 * kernels a program calls without MLIR, Python, SQLite or mgpu-tune. C11 and C++17; it needs no
 * CUDA header (a stream is the CUstream / cudaStream_t of the caller's current context).
 *
 * Contract: every function returns MGPU_OK or a status that names what is wrong, never a wrong
 * result: the problem is checked (sizes, dtypes, layout, 16-byte alignment TMA needs), the device
 * of the calling thread's current CUDA context must be one the pack has kernels for, and the
 * caller's workspace must be at least what mgpu_matmul_workspace_size() says for that device.
 * Tensors are dense and row-major: A is M x K, B is K x N ("kn") or N x K ("nk"), C is M x N.
 * A launch is asynchronous on `stream`; the workspace is the stream's until the launch ends (one
 * workspace per stream in flight, as with cuBLAS). mgpu_last_error() gives the calling thread's
 * last failure in words. Thread-safe. */
#ifndef MGPU_PACK_H
#define MGPU_PACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st* mgpu_stream;

typedef enum { MGPU_BF16 = 0, MGPU_F16 = 1, MGPU_F32 = 2 } mgpu_dtype;
typedef enum { MGPU_B_KN = 0, MGPU_B_NK = 1 } mgpu_b_layout;

typedef enum {
  MGPU_OK = 0,
  MGPU_ERR_INVALID_ARGUMENT,   /* a size out of range, a null pointer */
  MGPU_ERR_UNSUPPORTED_DTYPE,
  MGPU_ERR_UNSUPPORTED_LAYOUT,
  MGPU_ERR_MISALIGNED,         /* a base not 16-byte aligned, a row not a multiple of 16 bytes */
  MGPU_ERR_WORKSPACE_TOO_SMALL,
  MGPU_ERR_NO_KERNEL_FOR_ARCH, /* the device is no architecture the pack has kernels for */
  MGPU_ERR_NO_KERNEL,          /* none for these dtypes and layout on this architecture */
  MGPU_ERR_DRIVER_UNAVAILABLE, /* no CUDA driver could be loaded */
  MGPU_ERR_NO_CONTEXT,         /* the calling thread has no current CUDA context */
  MGPU_ERR_CUDA                /* a driver call failed: mgpu_last_cuda_result() says which code */
} mgpu_status;

const char* mgpu_status_name(mgpu_status status);
const char* mgpu_last_error(void);
int mgpu_last_cuda_result(void);

/* The workspace a call of this problem takes on the current context's device, in bytes. */
mgpu_status mgpu_matmul_workspace_size(int64_t m, int64_t n, int64_t k, mgpu_dtype in, mgpu_dtype out,
                                       mgpu_b_layout b, size_t* bytes);
/* C = A . B with the pack's kernel for the problem: its own tuned config, else the nearest tuned
 * one of these dtypes and layout (by the product of the size ratios) that can run it (a split-K
 * kernel needs a split of at least 2 there), else the pack's default. */
mgpu_status mgpu_matmul(mgpu_stream stream, const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k,
                        mgpu_dtype in, mgpu_dtype out, mgpu_b_layout layout, void* workspace, size_t workspace_bytes);

/* What the pack holds, one entry per (tuned problem or default, architecture). */
typedef struct {
  const char* op;            /* "matmul" */
  const char* template_name; /* "matmul_sm90" */
  const char* arch;          /* "sm_90a" */
  const char* problem_key;   /* the problem it was tuned at ("m4096_n4096_k4096_bf16_bf16_kn") */
  const char* config_json;
  const char* verification;  /* "hardware", "virtual" or "none" */
  const char* source;        /* "cuda" (measured), "model" (predicted) or "default" */
  const char* tool_version;  /* the mgpu-tune that built the binary (the export) */
  const char* source_hash;   /* of the template version that built it */
  const char* kernel_hash;   /* of the PTX shipped */
  double median_ms;          /* at its problem; 0 for a default */
} mgpu_pack_entry_info;

int mgpu_pack_entry_count(void);
mgpu_status mgpu_pack_entry(int index, mgpu_pack_entry_info* info);
/* Which entry mgpu_matmul() takes for a problem on the current device, and how it was chosen
 * ("exact", "nearest" or "default"). */
mgpu_status mgpu_matmul_select(int64_t m, int64_t n, int64_t k, mgpu_dtype in, mgpu_dtype out, mgpu_b_layout layout,
                               int* entry, const char** how);
/* mgpu_matmul() with one entry forced (tests, benchmarks): it must be of the problem's dtypes,
 * layout and the device's architecture, and able to run the problem. */
mgpu_status mgpu_matmul_entry(int entry, mgpu_stream stream, const void* a, const void* b, void* c, int64_t m, int64_t n,
                              int64_t k, mgpu_dtype in, mgpu_dtype out, mgpu_b_layout layout, void* workspace,
                              size_t workspace_bytes);
/* The workspace mgpu_matmul_entry() takes for that entry and problem on the current device. */
mgpu_status mgpu_matmul_entry_workspace_size(int entry, int64_t m, int64_t n, int64_t k, mgpu_dtype in, mgpu_dtype out,
                                             mgpu_b_layout layout, size_t* bytes);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PACK_H */
