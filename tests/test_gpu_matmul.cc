// On a Hopper GPU: the matmul template computes C = A . B correctly for both B layouts,
// clustered and not, ragged shapes included, against a float64 reference, with C poisoned
// (NaN) before the run and fresh random inputs per case. Skips without an sm_90 GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_kernel.h"
#include "core/prepared_launch.h"
#include "kernels/matmul_template.h"
#include "tests/support/gpu_test.h"
#include "tests/support/matmul_cases.h"
#include "tests/support/matmul_on_device.h"

namespace mgpu::kernels {
namespace {


using ::mgpu::testing::MatmulCase;
using ::mgpu::testing::matmul_error_on_device;
using Case = MatmulCase;

class GpuMatmul : public ::mgpu::testing::HopperGpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(GpuMatmul, MatchesAFloat64Reference) {
  double rel = matmul_error_on_device(GetParam().problem, GetParam().config, sm_count_, 17);
  EXPECT_LT(rel, 1e-2) << GetParam().config;
  rel = matmul_error_on_device(GetParam().problem, GetParam().config, sm_count_, 99);  // fresh inputs: the same function on other data
  EXPECT_LT(rel, 1e-2) << GetParam().config;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuMatmul, ::testing::ValuesIn(::mgpu::testing::gpu_matmul_cases()));

}  // namespace
}  // namespace mgpu::kernels
