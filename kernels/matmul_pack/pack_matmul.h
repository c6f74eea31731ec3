/* A kernel pack's matmul (C11; not part of the pack's ABI): the table of tuned configs the
 * generated tables define, and mgpu_pack.h's matmul functions over it. An entry's kernel is the
 * config's binary for its dtypes and layout; its consts are what launch_math.h computes a launch
 * of any problem from, so a config tuned at one shape runs correctly at another. */
#ifndef MGPU_PACK_MATMUL_H
#define MGPU_PACK_MATMUL_H

#include <stdint.h>

#include "launch_math.h"
#include "pack_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int info;   /* its mgpu_pack_entry_info (mgpu_pk_common()->infos) */
  int kernel; /* its compiled kernel (mgpu_pk_common()->kernels): maps A, B, C */
  mgpu_lm_matmul consts;
  int64_t m, n, k; /* the problem it was tuned at */
  int32_t in, out, layout;
  int is_default; /* the pack's default for its dtypes and layout: taken where nothing tuned is */
} mgpu_pk_matmul_entry;

typedef struct {
  const mgpu_pk_matmul_entry* entries;
  int count;
} mgpu_pk_matmul_table;

const mgpu_pk_matmul_table* mgpu_pk_matmul(void); /* defined by the generated tables */

/* The descriptors' room at the start of the caller's workspace: three 128-byte CUtensorMaps (A, B,
 * C), the kernel's own workspace after it, 256-byte aligned. */
#define MGPU_PK_MATMUL_DESCRIPTOR_BYTES 512

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PACK_MATMUL_H */
