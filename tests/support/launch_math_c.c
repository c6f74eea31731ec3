/* kernels/matmul_common/launch_math.h compiled as C99 (-std=c99 -Wall -Wextra -pedantic -Werror),
 * as an exported pack's launcher compiles it: test_launch_math.cc holds these to the templates. */
#include "tests/support/launch_math_c.h"

uint32_t mgpu_lm_c_grid(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count) {
  return mgpu_lm_grid(c, m, n, k, sm_count);
}

int64_t mgpu_lm_c_workspace_bytes(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count) {
  return mgpu_lm_workspace_bytes(c, m, n, k, sm_count);
}

int mgpu_lm_c_scalar_args(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int32_t out[MGPU_LM_MAX_SCALARS]) {
  return mgpu_lm_scalar_args(c, m, n, k, out);
}
