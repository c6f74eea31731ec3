// Spec tests for core/emu/insns/arith.cc, integer forms: PTX ISA 9.7.1 "Integer Arithmetic
// Instructions" (add, sub, mul, mad, div, rem, abs, neg, min, max). Values wrap modulo 2^n
// unless .sat is given; expected values are worked out by hand from the text.
#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;
constexpr std::uint64_t M32 = 0xFFFFFFFFull;
std::uint64_t s32(std::int32_t v) { return static_cast<std::uint32_t>(v); }
std::uint64_t s64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// 9.7.1.1 add: "d = a + b", wraps; add.sat.s32 "limits the result to MININT..MAXINT".
TEST_F(Isa, AddWrapsAndSaturates) {
  EXPECT_EQ(op("add.s32", 32, {R(0x7FFFFFFF), R(1)}), 0x80000000u);
  EXPECT_EQ(op("add.u32", 32, {R(M32), R(2)}), 1u);
  EXPECT_EQ(op("add.s64", 64, {RD(0x7FFFFFFFFFFFFFFFull), RD(1)}), 0x8000000000000000ull);
  EXPECT_EQ(op("add.u64", 64, {RD(~0ull), RD(1)}), 0u);
  EXPECT_EQ(op("add.sat.s32", 32, {R(0x7FFFFFFF), R(1)}), 0x7FFFFFFFu);
  EXPECT_EQ(op("add.sat.s32", 32, {R(0x80000000), R(s32(-1))}), 0x80000000u);
  EXPECT_EQ(op("add.sat.s32", 32, {R(5), R(s32(-3))}), 2u);
  EXPECT_EQ(op("add.u16", 16, {H(0xFFFF), H(3)}), 2u);
}

// 9.7.1.2 sub: "d = a - b"; sub.sat.s32 clamps like add.sat.
TEST_F(Isa, SubWrapsAndSaturates) {
  EXPECT_EQ(op("sub.s32", 32, {R(0x80000000), R(1)}), 0x7FFFFFFFu);
  EXPECT_EQ(op("sub.u32", 32, {R(0), R(1)}), M32);
  EXPECT_EQ(op("sub.u64", 64, {RD(0), RD(1)}), ~0ull);
  EXPECT_EQ(op("sub.sat.s32", 32, {R(0x80000000), R(1)}), 0x80000000u);
  EXPECT_EQ(op("sub.sat.s32", 32, {R(0x7FFFFFFF), R(s32(-1))}), 0x7FFFFFFFu);
  EXPECT_EQ(op("sub.sat.s32", 32, {R(3), R(5)}), s32(-2));
}

// 9.7.1.3 mul: "t = a * b; n = bitwidth of type; d = t<2n-1..n> for .hi; d = t<n-1..0> for .lo;
// .wide: d = t" (d twice as wide as the sources).
TEST_F(Isa, MulLoHiWide) {
  EXPECT_EQ(op("mul.lo.s32", 32, {R(0x10000), R(0x10000)}), 0u);
  EXPECT_EQ(op("mul.lo.s32", 32, {R(s32(-3)), R(5)}), s32(-15));
  EXPECT_EQ(op("mul.lo.u32", 32, {R(M32), R(M32)}), 1u);  // (2^32-1)^2 = 2^64 - 2^33 + 1
  EXPECT_EQ(op("mul.lo.u64", 64, {RD(~0ull), RD(3)}), s64(-3));
  // .hi of negative products: the high half of the signed 2n-bit product.
  EXPECT_EQ(op("mul.hi.u32", 32, {R(M32), R(M32)}), 0xFFFFFFFEu);
  EXPECT_EQ(op("mul.hi.s32", 32, {R(s32(-1)), R(s32(-1))}), 0u);
  EXPECT_EQ(op("mul.hi.s32", 32, {R(s32(-2)), R(3)}), M32);                     // -6
  EXPECT_EQ(op("mul.hi.s32", 32, {R(0x80000000), R(0x80000000)}), 0x40000000u);  // 2^62
  EXPECT_EQ(op("mul.hi.s32", 32, {R(0x80000000), R(2)}), M32);                  // -2^32
  EXPECT_EQ(op("mul.hi.u32", 32, {R(0x80000000), R(2)}), 1u);
  EXPECT_EQ(op("mul.hi.s64", 64, {RD(s64(-2)), RD(3)}), ~0ull);
  EXPECT_EQ(op("mul.hi.s64", 64, {RD(s64(-1)), RD(s64(-1))}), 0u);
  EXPECT_EQ(op("mul.hi.u64", 64, {RD(~0ull), RD(~0ull)}), 0xFFFFFFFFFFFFFFFEull);
  EXPECT_EQ(op("mul.hi.s64", 64, {RD(0x8000000000000000ull), RD(0x8000000000000000ull)}), 0x4000000000000000ull);
  EXPECT_EQ(op("mul.wide.s32", 64, {R(s32(-2)), R(3)}), s64(-6));
  EXPECT_EQ(op("mul.wide.u32", 64, {R(M32), R(M32)}), 0xFFFFFFFE00000001ull);
  EXPECT_EQ(op("mul.wide.s32", 64, {R(0x80000000), R(0x80000000)}), 0x4000000000000000ull);
  EXPECT_EQ(op("mul.wide.u16", 32, {H(0xFFFF), H(0xFFFF)}), 0xFFFE0001u);
  EXPECT_EQ(op("mul.wide.s16", 32, {H(0xFFFF), H(0x8000)}), 0x8000u);  // -1 * -32768
}

// 9.7.1.4 mad: "t = a * b; d = t<n-1..0> + c" (.lo); .wide: "d = t + c" with c and d 2n bits.
TEST_F(Isa, MadLoWide) {
  EXPECT_EQ(op("mad.lo.s32", 32, {R(0x10000), R(0x10000), R(7)}), 7u);
  EXPECT_EQ(op("mad.lo.s32", 32, {R(s32(-3)), R(5), R(20)}), 5u);
  EXPECT_EQ(op("mad.lo.u64", 64, {RD(~0ull), RD(2), RD(3)}), 1u);
  EXPECT_EQ(op("mad.wide.s32", 64, {R(s32(-2)), R(3), RD(10)}), 4u);
  EXPECT_EQ(op("mad.wide.s32", 64, {R(s32(-1)), R(1), RD(0)}), ~0ull);
  EXPECT_EQ(op("mad.wide.u32", 64, {R(M32), R(M32), RD(0xFFFFFFFF)}), 0xFFFFFFFF00000000ull);
  EXPECT_EQ(op("mad.hi.s32", 32, {R(s32(-2)), R(3), R(1)}), 0u);  // hi(-6) = -1, + 1
}

// 9.7.1.6 div: "d = a / b"; the signed quotient rounds toward zero (C semantics).
// 9.7.1.7 rem: "d = a % b" with the sign of the dividend.
TEST_F(Isa, DivRemRoundTowardZero) {
  EXPECT_EQ(op("div.s32", 32, {R(7), R(s32(-2))}), s32(-3));
  EXPECT_EQ(op("div.s32", 32, {R(s32(-7)), R(2)}), s32(-3));
  EXPECT_EQ(op("div.s32", 32, {R(s32(-7)), R(s32(-2))}), 3u);
  EXPECT_EQ(op("div.u32", 32, {R(M32), R(2)}), 0x7FFFFFFFu);
  EXPECT_EQ(op("div.s64", 64, {RD(s64(-7)), RD(2)}), s64(-3));
  EXPECT_EQ(op("div.u64", 64, {RD(~0ull), RD(3)}), 0x5555555555555555ull);
  EXPECT_EQ(op("rem.s32", 32, {R(7), R(s32(-2))}), 1u);
  EXPECT_EQ(op("rem.s32", 32, {R(s32(-7)), R(2)}), s32(-1));
  EXPECT_EQ(op("rem.u32", 32, {R(M32), R(10)}), 5u);
  EXPECT_EQ(op("rem.s64", 64, {RD(s64(-7)), RD(3)}), s64(-1));
  EXPECT_EQ(op("rem.u64", 64, {RD(~0ull), RD(10)}), 5u);  // 18446744073709551615 % 10
}

// The quotient of the most negative .s64 by -1 does not fit; the ISA gives it no value, but the
// virtual device must finish the launch (x86's idiv traps: SIGFPE would kill the host process).
// Only the -1 divisor's ordinary cases are checked for values.
TEST_F(Isa, DivRemS64MostNegativeByMinusOneDoesNotTrap) {
  (void)op("div.s64", 64, {RD(0x8000000000000000ull), RD(~0ull)});
  (void)op("rem.s64", 64, {RD(0x8000000000000000ull), RD(~0ull)});
  EXPECT_EQ(op("div.s64", 64, {RD(5), RD(~0ull)}), s64(-5));
  EXPECT_EQ(op("rem.s64", 64, {RD(5), RD(~0ull)}), 0u);
  EXPECT_EQ(op("div.s32", 32, {R(5), R(M32)}), s32(-5));
}

// 9.7.1.10/.11 min/max: "d = (a < b) ? a : b", signed or unsigned by type.
// 9.7.1.8 abs, 9.7.1.9 neg: two's complement.
TEST_F(Isa, MinMaxNegAbs) {
  EXPECT_EQ(op("min.s32", 32, {R(s32(-1)), R(1)}), M32);
  EXPECT_EQ(op("min.u32", 32, {R(M32), R(1)}), 1u);
  EXPECT_EQ(op("max.s32", 32, {R(s32(-1)), R(1)}), 1u);
  EXPECT_EQ(op("max.u32", 32, {R(M32), R(1)}), M32);
  EXPECT_EQ(op("min.s64", 64, {RD(0x8000000000000000ull), RD(0)}), 0x8000000000000000ull);
  EXPECT_EQ(op("max.s64", 64, {RD(0x8000000000000000ull), RD(0)}), 0u);
  EXPECT_EQ(op("min.u64", 64, {RD(~0ull), RD(0)}), 0u);
  EXPECT_EQ(op("max.u64", 64, {RD(~0ull), RD(0)}), ~0ull);
  EXPECT_EQ(op("min.s16", 16, {H(0x8000), H(1)}), 0x8000u);
  // min/max.relu.s32 (sm_90+): "clamps the result to 0 if negative".
  EXPECT_EQ(op("min.relu.s32", 32, {R(s32(-7)), R(3)}), 0u);
  EXPECT_EQ(op("min.relu.s32", 32, {R(9), R(3)}), 3u);
  EXPECT_EQ(op("max.relu.s32", 32, {R(s32(-7)), R(s32(-3))}), 0u);
  EXPECT_EQ(op("max.relu.s32", 32, {R(s32(-7)), R(4)}), 4u);
  EXPECT_EQ(op("neg.s32", 32, {R(5)}), s32(-5));
  EXPECT_EQ(op("neg.s32", 32, {R(0x80000000)}), 0x80000000u);
  EXPECT_EQ(op("neg.s64", 64, {RD(1)}), ~0ull);
  EXPECT_EQ(op("abs.s32", 32, {R(s32(-5))}), 5u);
  EXPECT_EQ(op("abs.s32", 32, {R(5)}), 5u);
  EXPECT_EQ(op("abs.s64", 64, {RD(s64(-5))}), 5u);
  EXPECT_EQ(op("abs.s16", 16, {H(0xFFFB)}), 5u);
}

}  // namespace
}  // namespace mgpu::emu::isa
