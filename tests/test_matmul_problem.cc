#include "kernels/matmul_problem.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mgpu::kernels {
namespace {

TEST(MatmulProblem, ParsesDtypesAndLayouts) {
  EXPECT_EQ(parse_dtype("bf16"), DType::BF16);
  EXPECT_EQ(parse_dtype("f16"), DType::F16);
  EXPECT_EQ(parse_dtype("f32"), DType::F32);
  EXPECT_EQ(parse_b_layout("kn"), BLayout::KN);
  EXPECT_EQ(parse_b_layout("nk"), BLayout::NK);
  EXPECT_THROW(parse_dtype("fp8"), core::Error);
  EXPECT_THROW(parse_b_layout("row"), core::Error);
}

TEST(MatmulProblem, CountsFlopsBytesAndHasAStableKey) {
  MatmulProblem p{.m = 128, .n = 256, .k = 64, .in_dtype = DType::F16, .out_dtype = DType::F32,
                  .b_layout = BLayout::NK};
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 128 * 256 * 64);
  EXPECT_DOUBLE_EQ(p.min_bytes(), 2.0 * (128 * 64 + 64 * 256) + 4.0 * 128 * 256);
  EXPECT_EQ(p.key(), "m128_n256_k64_f16_f32_nk");
}

TEST(MatmulProblem, ValidationRejectsBadShapesAndDtypes) {
  MatmulProblem ok;
  EXPECT_NO_THROW(validate(ok));
  MatmulProblem ragged{.m = 1, .n = 3, .k = 7};
  EXPECT_NO_THROW(validate(ragged));  // any M, N, K >= 1
  for (auto bad : {MatmulProblem{.m = 0}, MatmulProblem{.n = -5}, MatmulProblem{.k = 1LL << 40},
                   MatmulProblem{.in_dtype = DType::F32}}) {
    try {
      validate(bad);
      FAIL() << "accepted " << bad.key();
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    }
  }
}

}  // namespace
}  // namespace mgpu::kernels

#include "core/half.h"

namespace mgpu::core {
namespace {

TEST(HalfPrecision, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, 1.0f, -2.5f, 0.333251953125f, 65504.0f, std::ldexp(1.0f, -20), -3 * std::ldexp(1.0f, -24),
                  -3.0517578125e-05f}) {
    EXPECT_EQ(from_f16(to_f16(f)), f) << f;  // representable in f16
  }
  EXPECT_EQ(from_bf16(to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(from_bf16(to_bf16(-3.140625f)), -3.140625f);
  EXPECT_EQ(to_bf16(1.0f + 1.0f / 256), to_bf16(1.0f));        // a tie rounds to even
  EXPECT_EQ(to_f16(1.0f + 1.0f / 2048), to_f16(1.0f));         // a tie rounds to even
  EXPECT_EQ(to_f16(1.0f + 3.0f / 2048), to_f16(1.0f + 2.0f / 1024));
  EXPECT_TRUE(std::isinf(from_f16(to_f16(1e6f))));
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(NAN))));
  EXPECT_TRUE(std::isnan(from_f16(to_f16(NAN))));
}

}  // namespace
}  // namespace mgpu::core
