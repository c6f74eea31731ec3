/* Entry points into launch_math.h as compiled by a C compiler (launch_math_c.c). */
#ifndef MGPU_TESTS_LAUNCH_MATH_C_H
#define MGPU_TESTS_LAUNCH_MATH_C_H

#include "kernels/matmul_common/launch_math.h"

#ifdef __cplusplus
extern "C" {
#endif

uint32_t mgpu_lm_c_grid(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count);
int64_t mgpu_lm_c_workspace_bytes(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count);
int mgpu_lm_c_scalar_args(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int32_t out[MGPU_LM_MAX_SCALARS]);

#ifdef __cplusplus
}
#endif

#endif
