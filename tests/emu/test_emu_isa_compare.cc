// Spec tests for core/emu/insns/compare.cc: PTX ISA 9.7.7.4 setp and 9.7.7.1 selp, with the
// comparison operators of 9.3.1 "Comparison" (9.3.1.1 integer and bit-size comparisons incl.
// the unsigned lo/ls/hi/hs; 9.3.1.2 floating-point comparisons: ordered ones are false when
// either operand is NaN, unordered ones (equ, neu, ltu, leu, gtu, geu) true, num/nan test NaN).
#include <cmath>

#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;

struct Row {
  const char* cmp;
  int expect[5];
};

// Signed vs unsigned: -1 is 0xFFFFFFFF, the largest .u32.
TEST_F(Isa, SetpIntegerEveryOperator) {
  const std::uint64_t m1 = 0xFFFFFFFFu;
  const std::uint64_t pa[3] = {m1, 1, 2}, pb[3] = {1, m1, 2};
  const Row s[] = {{"eq", {0, 0, 1}}, {"ne", {1, 1, 0}}, {"lt", {1, 0, 0}},
                   {"le", {1, 0, 1}}, {"gt", {0, 1, 0}}, {"ge", {0, 1, 1}}};
  const Row u[] = {{"eq", {0, 0, 1}}, {"ne", {1, 1, 0}}, {"lt", {0, 1, 0}}, {"le", {0, 1, 1}},
                   {"gt", {1, 0, 0}}, {"ge", {1, 0, 1}}, {"lo", {0, 1, 0}}, {"ls", {0, 1, 1}},
                   {"hi", {1, 0, 0}}, {"hs", {1, 0, 1}}};
  for (const Row& r : s)
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(op(std::string("setp.") + r.cmp + ".s32", 1, {R(pa[i]), R(pb[i])}), std::uint64_t(r.expect[i])) << r.cmp << " s32 " << i;
      const std::uint64_t a64 = pa[i] == m1 ? ~0ull : pa[i], b64 = pb[i] == m1 ? ~0ull : pb[i];
      EXPECT_EQ(op(std::string("setp.") + r.cmp + ".s64", 1, {RD(a64), RD(b64)}), std::uint64_t(r.expect[i])) << r.cmp << " s64 " << i;
    }
  for (const Row& r : u)
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(op(std::string("setp.") + r.cmp + ".u32", 1, {R(pa[i]), R(pb[i])}), std::uint64_t(r.expect[i])) << r.cmp << " u32 " << i;
      const std::uint64_t a64 = pa[i] == m1 ? ~0ull : pa[i], b64 = pb[i] == m1 ? ~0ull : pb[i];
      EXPECT_EQ(op(std::string("setp.") + r.cmp + ".u64", 1, {RD(a64), RD(b64)}), std::uint64_t(r.expect[i])) << r.cmp << " u64 " << i;
    }
  EXPECT_EQ(op("setp.eq.b32", 1, {R(7), R(7)}), 1u);
  EXPECT_EQ(op("setp.ne.b64", 1, {RD(1ull << 40), RD(0)}), 1u);
  EXPECT_EQ(op("setp.lt.s16", 1, {H(0x8000), H(1)}), 1u);
}

TEST_F(Isa, SetpFloatOrderedUnorderedWithNaN) {
  const float nan = std::nanf("");
  const float pa[5] = {1, 2, 2, nan, 1}, pb[5] = {2, 1, 2, 1, nan};
  const Row rows[] = {{"eq", {0, 0, 1, 0, 0}},  {"ne", {1, 1, 0, 0, 0}},  {"lt", {1, 0, 0, 0, 0}},
                      {"le", {1, 0, 1, 0, 0}},  {"gt", {0, 1, 0, 0, 0}},  {"ge", {0, 1, 1, 0, 0}},
                      {"equ", {0, 0, 1, 1, 1}}, {"neu", {1, 1, 0, 1, 1}}, {"ltu", {1, 0, 0, 1, 1}},
                      {"leu", {1, 0, 1, 1, 1}}, {"gtu", {0, 1, 0, 1, 1}}, {"geu", {0, 1, 1, 1, 1}},
                      {"num", {1, 1, 1, 0, 0}}, {"nan", {0, 0, 0, 1, 1}}};
  for (const Row& r : rows)
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(op(std::string("setp.") + r.cmp + ".f32", 1, {R(f32(pa[i])), R(f32(pb[i]))}), std::uint64_t(r.expect[i])) << r.cmp << " f32 " << i;
      EXPECT_EQ(op(std::string("setp.") + r.cmp + ".f64", 1, {RD(f64(pa[i])), RD(f64(pb[i]))}), std::uint64_t(r.expect[i])) << r.cmp << " f64 " << i;
    }
  // -0.0 == +0.0.
  EXPECT_EQ(op("setp.eq.f32", 1, {R(0x80000000), R(0)}), 1u);
}

// setp.CmpOp.BoolOp: "p = BoolOp(t, c)" with t the comparison; c may be negated with '!'.
TEST_F(Isa, SetpBooleanCombine) {
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(op("setp.lt.and.s32", 1, {R(1), R(2), P(c)}), std::uint64_t(1 & c)) << c;
    EXPECT_EQ(op("setp.gt.and.s32", 1, {R(1), R(2), P(c)}), 0u) << c;
    EXPECT_EQ(op("setp.gt.or.s32", 1, {R(1), R(2), P(c)}), std::uint64_t(c)) << c;
    EXPECT_EQ(op("setp.lt.or.s32", 1, {R(1), R(2), P(c)}), 1u) << c;
    EXPECT_EQ(op("setp.lt.xor.s32", 1, {R(1), R(2), P(c)}), std::uint64_t(1 ^ c)) << c;
  }
  // Negated c: and with !c.
  std::string body =
      "  ld.global.u32 %r1, [%rd62];\n  setp.ne.u32 %p1, %r1, 0;\n"
      "  setp.lt.and.s32 %p2, 1, 2, !%p1;\n  selp.u32 %r2, 1, 0, %p2;\n  st.global.u32 [%rd63], %r2;\n";
  EXPECT_EQ(run(body, {1}, 1)[0], 0u);
  EXPECT_EQ(run(body, {0}, 1)[0], 1u);
}

// 9.7.7.1 selp: "d = (c == 1) ? a : b".
TEST_F(Isa, Selp) {
  EXPECT_EQ(op("selp.b32", 32, {R(11), R(22), P(true)}), 11u);
  EXPECT_EQ(op("selp.b32", 32, {R(11), R(22), P(false)}), 22u);
  EXPECT_EQ(op("selp.b64", 64, {RD(1ull << 40), RD(5), P(true)}), 1ull << 40);
  EXPECT_EQ(op("selp.s64", 64, {RD(1ull << 40), RD(5), P(false)}), 5u);
  EXPECT_EQ(op("selp.f32", 32, {R(f32(1.5f)), R(f32(-2.f)), P(false)}), f32(-2.f));
  EXPECT_EQ(op("selp.b16", 16, {H(0xAAAA), H(0x5555), P(true)}), 0xAAAAu);
}

}  // namespace
}  // namespace mgpu::emu::isa
