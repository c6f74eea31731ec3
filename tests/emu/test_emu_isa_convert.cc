// Spec tests for core/emu/insns/convert.cc: PTX ISA 9.7.9.21 cvt and its rounding modifiers
// (9.7.9.21 "Rounding modifiers": .rn nearest even, .rz toward zero, .rm toward -inf, .rp
// toward +inf; .rni/.rzi/.rmi/.rpi round to an integral value). Integer-to-integer: sign
// extension from signed sources, zero extension from unsigned ones, truncation to narrower
// types, .sat clamping to the destination range. Float-to-integer conversions saturate by
// default and give 0 for NaN. Packed .f16x2/.bf16x2: "the value converted from input a is
// stored in the upper half of d and the value converted from input b in the lower half".
#include <cmath>

#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;
std::uint64_t s32(std::int32_t v) { return static_cast<std::uint32_t>(v); }
const float kNaN = std::nanf("");

TEST_F(Isa, CvtIntegerExtendTruncate) {
  EXPECT_EQ(op("cvt.s32.s8", 32, {R(0x80)}), 0xFFFFFF80u);
  EXPECT_EQ(op("cvt.u32.u8", 32, {R(0x80)}), 0x80u);
  EXPECT_EQ(op("cvt.s32.u8", 32, {R(0x80)}), 0x80u);
  EXPECT_EQ(op("cvt.u32.s8", 32, {R(0xFF)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("cvt.s32.s16", 32, {H(0x8000)}), 0xFFFF8000u);
  EXPECT_EQ(op("cvt.u32.u16", 32, {H(0x8000)}), 0x8000u);
  EXPECT_EQ(op("cvt.s64.s32", 64, {R(0x80000000)}), 0xFFFFFFFF80000000ull);
  EXPECT_EQ(op("cvt.u64.u32", 64, {R(0x80000000)}), 0x80000000ull);
  EXPECT_EQ(op("cvt.u64.s32", 64, {R(0xFFFFFFFF)}), ~0ull);
  EXPECT_EQ(op("cvt.u16.u32", 16, {R(0x12345)}), 0x2345u);
  EXPECT_EQ(op("cvt.s16.s32", 16, {R(0x18000)}), 0x8000u);
  EXPECT_EQ(op("cvt.u32.u64", 32, {RD(0x123456789ull)}), 0x23456789u);
}

TEST_F(Isa, CvtIntegerSaturate) {
  EXPECT_EQ(op("cvt.sat.s16.s32", 16, {R(40000)}), 0x7FFFu);
  EXPECT_EQ(op("cvt.sat.s16.s32", 16, {R(s32(-40000))}), 0x8000u);
  EXPECT_EQ(op("cvt.sat.s16.s32", 16, {R(5)}), 5u);
  EXPECT_EQ(op("cvt.sat.u16.s32", 16, {R(s32(-5))}), 0u);
  EXPECT_EQ(op("cvt.sat.u16.s32", 16, {R(70000)}), 0xFFFFu);
  EXPECT_EQ(op("cvt.sat.u32.s32", 32, {R(s32(-1))}), 0u);
  EXPECT_EQ(op("cvt.sat.s32.u32", 32, {R(0x80000000)}), 0x7FFFFFFFu);
  EXPECT_EQ(op("cvt.sat.u32.u64", 32, {RD(1ull << 32)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("cvt.sat.s32.s64", 32, {RD(static_cast<std::uint64_t>(-(1ll << 40)))}), 0x80000000u);
  EXPECT_EQ(op("cvt.sat.s64.u64", 64, {RD(~0ull)}), 0x7FFFFFFFFFFFFFFFull);
}

TEST_F(Isa, CvtFloatToIntRoundingSaturationNaN) {
  EXPECT_EQ(op("cvt.rni.s32.f32", 32, {R(f32(2.5f))}), 2u);
  EXPECT_EQ(op("cvt.rni.s32.f32", 32, {R(f32(3.5f))}), 4u);
  EXPECT_EQ(op("cvt.rni.s32.f32", 32, {R(f32(-2.5f))}), s32(-2));
  EXPECT_EQ(op("cvt.rzi.s32.f32", 32, {R(f32(2.7f))}), 2u);
  EXPECT_EQ(op("cvt.rzi.s32.f32", 32, {R(f32(-2.7f))}), s32(-2));
  EXPECT_EQ(op("cvt.rmi.s32.f32", 32, {R(f32(-2.3f))}), s32(-3));
  EXPECT_EQ(op("cvt.rmi.s32.f32", 32, {R(f32(2.7f))}), 2u);
  EXPECT_EQ(op("cvt.rpi.s32.f32", 32, {R(f32(2.3f))}), 3u);
  EXPECT_EQ(op("cvt.rpi.s32.f32", 32, {R(f32(-2.7f))}), s32(-2));
  EXPECT_EQ(op("cvt.rni.s32.f32", 32, {R(f32(1e10f))}), 0x7FFFFFFFu);
  EXPECT_EQ(op("cvt.rni.s32.f32", 32, {R(f32(-1e10f))}), 0x80000000u);
  EXPECT_EQ(op("cvt.rni.s32.f32", 32, {R(f32(kNaN))}), 0u);
  EXPECT_EQ(op("cvt.rzi.u32.f32", 32, {R(f32(-1.5f))}), 0u);
  EXPECT_EQ(op("cvt.rzi.u32.f32", 32, {R(f32(5e9f))}), 0xFFFFFFFFu);
  EXPECT_EQ(op("cvt.rzi.u32.f32", 32, {R(f32(kNaN))}), 0u);
  EXPECT_EQ(op("cvt.rzi.s64.f32", 64, {R(f32(1e30f))}), 0x7FFFFFFFFFFFFFFFull);
  EXPECT_EQ(op("cvt.rzi.s64.f32", 64, {R(f32(-1e30f))}), 0x8000000000000000ull);
  EXPECT_EQ(op("cvt.rzi.s64.f64", 64, {RD(f64(9.3e18))}), 0x7FFFFFFFFFFFFFFFull);
  EXPECT_EQ(op("cvt.rzi.u64.f64", 64, {RD(f64(1e30))}), ~0ull);
  EXPECT_EQ(op("cvt.rzi.u64.f64", 64, {RD(f64(std::nan("")))}), 0u);
  EXPECT_EQ(op("cvt.rni.s32.f64", 32, {RD(f64(-0.5))}), 0u);
  EXPECT_EQ(op("cvt.rzi.s32.f16", 32, {H(0xC500)}), s32(-5));  // f16 -5.0
  EXPECT_EQ(op("cvt.rni.s16.f32", 16, {R(f32(40000.f))}), 0x7FFFu);
}

TEST_F(Isa, CvtIntToFloatRounding) {
  EXPECT_EQ(op("cvt.rn.f32.s32", 32, {R(s32(-7))}), f32(-7.f));
  EXPECT_EQ(op("cvt.rn.f32.u32", 32, {R(0xFFFFFFFF)}), f32(4294967296.f));
  EXPECT_EQ(op("cvt.rz.f32.u32", 32, {R(0xFFFFFFFF)}), f32(4294967040.f));
  EXPECT_EQ(op("cvt.rn.f32.s32", 32, {R(16777217)}), f32(16777216.f));  // tie to even
  EXPECT_EQ(op("cvt.rn.f32.s32", 32, {R(16777219)}), f32(16777220.f));  // tie to even
  EXPECT_EQ(op("cvt.rz.f32.s32", 32, {R(16777219)}), f32(16777218.f));
  EXPECT_EQ(op("cvt.rm.f32.s32", 32, {R(s32(-16777219))}), f32(-16777220.f));
  EXPECT_EQ(op("cvt.rp.f32.s32", 32, {R(16777217)}), f32(16777218.f));
  // 2^60 + 2^36 + 1 lies just above the midpoint of 2^60 and 2^60 + 2^37: one rounding gives the
  // upper neighbour (rounding through double first would land on the tie and go to 2^60).
  EXPECT_EQ(op("cvt.rn.f32.u64", 32, {RD((1ull << 60) + (1ull << 36) + 1)}), f32(std::ldexp(1.f, 60) + std::ldexp(1.f, 37)));
  EXPECT_EQ(op("cvt.rn.f64.s64", 64, {RD((1ull << 53) + 1)}), f64(std::ldexp(1.0, 53)));
  EXPECT_EQ(op("cvt.rp.f64.s64", 64, {RD((1ull << 53) + 1)}), f64(std::ldexp(1.0, 53) + 2));
  EXPECT_EQ(op("cvt.rn.f64.u64", 64, {RD(~0ull)}), f64(std::ldexp(1.0, 64)));
  EXPECT_EQ(op("cvt.rn.f16.s32", 16, {R(s32(-3))}), 0xC200u);
}

TEST_F(Isa, CvtFloatToFloat) {
  EXPECT_EQ(op("cvt.f64.f32", 64, {R(f32(0.1f))}), f64(static_cast<double>(0.1f)));
  const double x = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -30);  // above the f32 midpoint
  EXPECT_EQ(op("cvt.rn.f32.f64", 32, {RD(f64(x))}), f32(1.f + std::ldexp(1.f, -23)));
  EXPECT_EQ(op("cvt.rz.f32.f64", 32, {RD(f64(x))}), f32(1.f));
  EXPECT_EQ(op("cvt.rm.f32.f64", 32, {RD(f64(x))}), f32(1.f));
  EXPECT_EQ(op("cvt.rp.f32.f64", 32, {RD(f64(x))}), f32(1.f + std::ldexp(1.f, -23)));
  EXPECT_EQ(op("cvt.rm.f32.f64", 32, {RD(f64(-x))}), f32(-1.f - std::ldexp(1.f, -23)));
  EXPECT_EQ(op("cvt.rz.f32.f64", 32, {RD(f64(1e300))}), 0x7F7FFFFFu);  // toward zero: the largest finite
  EXPECT_EQ(op("cvt.rn.f32.f64", 32, {RD(f64(1e300))}), 0x7F800000u);
  // .rni/.rzi with a float destination: an integral value in floating point.
  EXPECT_EQ(op("cvt.rni.f32.f32", 32, {R(f32(2.5f))}), f32(2.f));
  EXPECT_EQ(op("cvt.rzi.f32.f32", 32, {R(f32(-2.7f))}), f32(-2.f));
  EXPECT_EQ(op("cvt.rmi.f64.f64", 64, {RD(f64(-2.5))}), f64(-3.0));
  // .sat on a float destination clamps to [0.0, 1.0] and NaN to +0.0.
  EXPECT_EQ(op("cvt.sat.f32.f32", 32, {R(f32(1.5f))}), f32(1.f));
  EXPECT_EQ(op("cvt.sat.f32.f32", 32, {R(f32(-1.f))}), 0u);
  EXPECT_EQ(op("cvt.sat.f32.f32", 32, {R(f32(kNaN))}), 0u);
}

// f32 -> f16 (1 sign, 5 exponent, 10 mantissa bits, max 65504) and back.
TEST_F(Isa, CvtF16RoundToNearestEven) {
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(1.f))}), 0x3C00u);
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(-2.f))}), 0xC000u);
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(0x80000000)}), 0x8000u);
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(65504.f))}), 0x7BFFu);
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(65519.f))}), 0x7BFFu);
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(65520.f))}), 0x7C00u);  // the tie above 65504 goes to infinity
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(1.f + std::ldexp(1.f, -11)))}), 0x3C00u);      // tie -> even
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(1.f + 3 * std::ldexp(1.f, -11)))}), 0x3C02u);  // tie -> even
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(1.f + 3 * std::ldexp(1.f, -12)))}), 0x3C01u);  // below the tie
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(std::ldexp(1.f, -24)))}), 0x0001u);  // smallest subnormal
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(std::ldexp(1.f, -25)))}), 0x0000u);  // tie -> even (0)
  EXPECT_EQ(op("cvt.rn.f16.f32", 16, {R(f32(3 * std::ldexp(1.f, -25)))}), 0x0002u);
  std::uint64_t n = op("cvt.rn.f16.f32", 16, {R(f32(kNaN))});
  EXPECT_EQ(n & 0x7C00u, 0x7C00u);
  EXPECT_NE(n & 0x03FFu, 0u) << "NaN stays NaN";
  EXPECT_EQ(op("cvt.rz.f16.f32", 16, {R(f32(65520.f))}), 0x7BFFu);
  EXPECT_EQ(op("cvt.rz.f16.f32", 16, {R(f32(1.f + 3 * std::ldexp(1.f, -11)))}), 0x3C01u);
  EXPECT_EQ(op("cvt.f32.f16", 32, {H(0x3C00)}), f32(1.f));
  EXPECT_EQ(op("cvt.f32.f16", 32, {H(0x0001)}), f32(std::ldexp(1.f, -24)));
  EXPECT_EQ(op("cvt.f32.f16", 32, {H(0xFC00)}), f32(-INFINITY));
  EXPECT_EQ(op("cvt.f32.f16", 32, {H(0x7BFF)}), f32(65504.f));
}

// f32 -> bf16 (1 sign, 8 exponent, 7 mantissa bits): the upper half of the f32, rounded.
TEST_F(Isa, CvtBf16RoundToNearestEven) {
  EXPECT_EQ(op("cvt.rn.bf16.f32", 16, {R(f32(1.f))}), 0x3F80u);
  EXPECT_EQ(op("cvt.rn.bf16.f32", 16, {R(0x3F808000)}), 0x3F80u);  // tie -> even
  EXPECT_EQ(op("cvt.rn.bf16.f32", 16, {R(0x3F818000)}), 0x3F82u);  // tie -> even
  EXPECT_EQ(op("cvt.rn.bf16.f32", 16, {R(0x3F808001)}), 0x3F81u);  // above the tie
  EXPECT_EQ(op("cvt.rn.bf16.f32", 16, {R(0xBF80FFFF)}), 0xBF81u);
  EXPECT_EQ(op("cvt.rn.bf16.f32", 16, {R(0x7F7FFFFF)}), 0x7F80u);  // rounds up to infinity
  EXPECT_EQ(op("cvt.rz.bf16.f32", 16, {R(0x7F7FFFFF)}), 0x7F7Fu);
  EXPECT_EQ(op("cvt.rz.bf16.f32", 16, {R(0x3F80FFFF)}), 0x3F80u);
  std::uint64_t n = op("cvt.rn.bf16.f32", 16, {R(f32(kNaN))});
  EXPECT_EQ(n & 0x7F80u, 0x7F80u);
  EXPECT_NE(n & 0x007Fu, 0u) << "NaN stays NaN";
  EXPECT_EQ(op("cvt.f32.bf16", 32, {H(0x3F80)}), f32(1.f));
  EXPECT_EQ(op("cvt.f32.bf16", 32, {H(0xC0A0)}), f32(-5.f));
}

TEST_F(Isa, CvtPackedFirstSourceInUpperHalf) {
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(f32(1.f)), R(f32(2.f))}), 0x3F804000u);
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(1.f)), R(f32(-2.f))}), 0x3C00C000u);
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(0x3F808000), R(0x3F818000)}), 0x3F803F82u);  // each half rounds to even
  // .relu: negative results clamp to 0.
  EXPECT_EQ(op("cvt.rn.relu.bf16x2.f32", 32, {R(f32(-1.f)), R(f32(3.f))}), 0x00004040u);
  EXPECT_EQ(op("cvt.rn.relu.f16x2.f32", 32, {R(f32(2.f)), R(f32(-0.5f))}), 0x40000000u);
  EXPECT_EQ(op("cvt.rn.relu.bf16.f32", 16, {R(f32(-1.f))}), 0u);
  EXPECT_EQ(op("cvt.rn.relu.bf16.f32", 16, {R(f32(2.f))}), 0x4000u);
  EXPECT_EQ(op("cvt.rn.relu.f16.f32", 16, {R(f32(-7.f))}), 0u);
  std::uint64_t n = op("cvt.rn.relu.bf16.f32", 16, {R(f32(kNaN))});
  EXPECT_EQ(n & 0x7F80u, 0x7F80u);
  EXPECT_NE(n & 0x007Fu, 0u) << ".relu keeps NaN a NaN";
}

}  // namespace
}  // namespace mgpu::emu::isa
