// Spec tests for the floating-point instructions (core/emu/insns/arith.cc float forms and
// float_math.cc): PTX ISA 9.7.3 "Floating-Point Instructions" add, sub, mul, fma, div, min, max,
// rcp, sqrt, with the rounding modifiers of 9.7.3 (.rn nearest even, .rz, .rm, .rp) and .sat
// ("clamps the result to [0.0, 1.0]; NaN results are flushed to +0.0"). min/max: "if one input
// is NaN, the result is the other input; if both are NaN, the result is NaN". fma computes
// a*b+c "in infinite precision and then rounds" once.
#include <cmath>

#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;
const float kNaN = std::nanf("");
float p2(int e) { return std::ldexp(1.f, e); }

TEST_F(Isa, AddSubMulRoundToNearestEven) {
  EXPECT_EQ(op("add.rn.f32", 32, {R(f32(1.f)), R(f32(p2(-24)))}), f32(1.f));                   // tie -> even
  EXPECT_EQ(op("add.rn.f32", 32, {R(f32(1.f)), R(f32(3 * p2(-24)))}), f32(1.f + p2(-22)));     // tie -> even
  EXPECT_EQ(op("add.f32", 32, {R(f32(1.5f)), R(f32(2.25f))}), f32(3.75f));
  EXPECT_EQ(op("sub.f32", 32, {R(f32(1.5f)), R(f32(2.25f))}), f32(-0.75f));
  EXPECT_EQ(op("mul.rn.f32", 32, {R(f32(1.f + p2(-12))), R(f32(1.f + p2(-12)))}), f32(1.f + p2(-11)));  // 1+2^-11+2^-24: tie -> even
  EXPECT_EQ(op("add.f64", 64, {RD(f64(0.1)), RD(f64(0.2))}), f64(0.1 + 0.2));
  EXPECT_EQ(op("mul.f64", 64, {RD(f64(3.0)), RD(f64(-0.5))}), f64(-1.5));
  EXPECT_TRUE(std::isnan(as_f(op("add.f32", 32, {R(f32(kNaN)), R(f32(1.f))}))));
  EXPECT_TRUE(std::isnan(as_f(op("add.f32", 32, {R(f32(INFINITY)), R(f32(-INFINITY))}))));
  EXPECT_TRUE(std::isnan(as_f(op("mul.f32", 32, {R(f32(0.f)), R(f32(INFINITY))}))));
}

// Directed rounding of add/mul: 1 + 3*2^-24 lies between 1+2^-23 and 1+2^-22.
TEST_F(Isa, AddMulDirectedRounding) {
  EXPECT_EQ(op("add.rz.f32", 32, {R(f32(1.f)), R(f32(3 * p2(-24)))}), f32(1.f + p2(-23)));
  EXPECT_EQ(op("add.rm.f32", 32, {R(f32(1.f)), R(f32(3 * p2(-24)))}), f32(1.f + p2(-23)));
  EXPECT_EQ(op("add.rp.f32", 32, {R(f32(1.f)), R(f32(p2(-24)))}), f32(1.f + p2(-23)));
  EXPECT_EQ(op("add.rm.f32", 32, {R(f32(-1.f)), R(f32(-p2(-24)))}), f32(-1.f - p2(-23)));
  EXPECT_EQ(op("mul.rz.f32", 32, {R(f32(1.f + p2(-12))), R(f32(1.f + p2(-12)))}), f32(1.f + p2(-11)));
  EXPECT_EQ(op("mul.rp.f32", 32, {R(f32(1.f + p2(-12))), R(f32(1.f + p2(-12)))}), f32(1.f + p2(-11) + p2(-23)));
}

TEST_F(Isa, FmaRoundsOnce) {
  const float a = 1.f + p2(-12);
  EXPECT_EQ(op("fma.rn.f32", 32, {R(f32(a)), R(f32(a)), R(f32(-(1.f + p2(-11))))}), f32(p2(-24)));
  EXPECT_EQ(op("mad.rn.f32", 32, {R(f32(a)), R(f32(a)), R(f32(-(1.f + p2(-11))))}), f32(p2(-24)));
  const double d = 1.0 + std::ldexp(1.0, -27);
  EXPECT_EQ(op("fma.rn.f64", 64, {RD(f64(d)), RD(f64(d)), RD(f64(-(1.0 + std::ldexp(1.0, -26))))}), f64(std::ldexp(1.0, -54)));
  EXPECT_EQ(op("fma.rn.f32", 32, {R(f32(2.f)), R(f32(3.f)), R(f32(1.f))}), f32(7.f));
}

TEST_F(Isa, MinMaxNaN) {
  EXPECT_EQ(op("min.f32", 32, {R(f32(kNaN)), R(f32(1.f))}), f32(1.f));
  EXPECT_EQ(op("min.f32", 32, {R(f32(1.f)), R(f32(kNaN))}), f32(1.f));
  EXPECT_EQ(op("max.f32", 32, {R(f32(kNaN)), R(f32(-1.f))}), f32(-1.f));
  EXPECT_EQ(op("max.f32", 32, {R(f32(-1.f)), R(f32(kNaN))}), f32(-1.f));
  EXPECT_TRUE(std::isnan(as_f(op("min.f32", 32, {R(f32(kNaN)), R(f32(kNaN))}))));
  EXPECT_TRUE(std::isnan(as_f(op("max.f32", 32, {R(f32(kNaN)), R(f32(kNaN))}))));
  EXPECT_EQ(op("min.f32", 32, {R(f32(-1.f)), R(f32(2.f))}), f32(-1.f));
  EXPECT_EQ(op("max.f32", 32, {R(f32(-1.f)), R(f32(2.f))}), f32(2.f));
  EXPECT_EQ(op("min.f64", 64, {RD(f64(std::nan(""))), RD(f64(3.0))}), f64(3.0));
  EXPECT_EQ(op("max.f64", 64, {RD(f64(-INFINITY)), RD(f64(-1e300))}), f64(-1e300));
}

TEST_F(Isa, SatClampsToUnitInterval) {
  EXPECT_EQ(op("add.sat.f32", 32, {R(f32(0.75f)), R(f32(0.5f))}), f32(1.f));
  EXPECT_EQ(op("add.sat.f32", 32, {R(f32(-2.f)), R(f32(1.f))}), 0u);
  EXPECT_EQ(op("mul.sat.f32", 32, {R(f32(0.5f)), R(f32(0.5f))}), f32(0.25f));
  EXPECT_EQ(op("add.sat.f32", 32, {R(f32(kNaN)), R(f32(1.f))}), 0u);
}

TEST_F(Isa, DivRcpSqrt) {
  EXPECT_EQ(op("div.rn.f32", 32, {R(f32(1.f)), R(f32(3.f))}), 0x3EAAAAABu);
  EXPECT_EQ(op("div.rn.f32", 32, {R(f32(1.f)), R(f32(0.f))}), f32(INFINITY));
  EXPECT_EQ(op("div.rn.f32", 32, {R(f32(-1.f)), R(f32(0.f))}), f32(-INFINITY));
  EXPECT_TRUE(std::isnan(as_f(op("div.rn.f32", 32, {R(f32(0.f)), R(f32(0.f))}))));
  EXPECT_EQ(op("div.rn.f64", 64, {RD(f64(1.0)), RD(f64(3.0))}), 0x3FD5555555555555ull);
  EXPECT_EQ(op("div.rz.f32", 32, {R(f32(2.f)), R(f32(3.f))}), 0x3F2AAAAAu);  // 0.6666.. rn would be ...AB
  EXPECT_EQ(op("rcp.rn.f32", 32, {R(f32(3.f))}), 0x3EAAAAABu);
  EXPECT_EQ(op("rcp.rn.f32", 32, {R(f32(0.f))}), f32(INFINITY));
  EXPECT_EQ(op("rcp.rn.f32", 32, {R(0x80000000)}), f32(-INFINITY));
  EXPECT_EQ(op("rcp.rn.f64", 64, {RD(f64(4.0))}), f64(0.25));
  EXPECT_EQ(op("sqrt.rn.f32", 32, {R(f32(2.f))}), 0x3FB504F3u);
  EXPECT_EQ(op("sqrt.rn.f32", 32, {R(f32(16.f))}), f32(4.f));
  EXPECT_TRUE(std::isnan(as_f(op("sqrt.rn.f32", 32, {R(f32(-1.f))}))));
  EXPECT_EQ(op("sqrt.rn.f64", 64, {RD(f64(2.0))}), 0x3FF6A09E667F3BCDull);
  EXPECT_EQ(op("neg.f32", 32, {R(f32(1.5f))}), f32(-1.5f));
  EXPECT_EQ(op("abs.f32", 32, {R(f32(-0.f))}), 0u);
  EXPECT_EQ(op("abs.f64", 64, {RD(f64(-2.5))}), f64(2.5));
}

}  // namespace
}  // namespace mgpu::emu::isa
