// Spec tests for the scalar math an attention kernel's online softmax runs on the virtual device:
//   - ex2 (PTX ISA 9.7.3.21 "Floating Point Instructions: ex2": "ex2.approx.f32 implements a fast
//     approximation to 2^a"; "The maximum ulp error is 2 ulp from correctly rounded result across
//     the full range of inputs"; Input -Inf -> +0.0, -0.0 -> +1.0, +0.0 -> +1.0, +Inf -> +Inf,
//     NaN -> NaN; "ex2.ftz.f32 flushes subnormal inputs and results to sign-preserving zero") and
//     9.7.4.10 "Half Precision Floating Point Instructions: ex2" (ex2.approx.f16/.f16x2 and
//     ex2.approx.ftz.bf16/.bf16x2; "The maximum relative error for .f16 type is 2^-9.9. The
//     maximum relative error for .bf16 type is 2^-7"; packed: "fA[0] = a[0:15]; fA[1] = a[16:31];
//     d[0] = 2 ^ fA[0]; d[1] = 2 ^ fA[1]"). The device computes .approx exactly; these tests only
//     hold it to the ISA's bounds, so they would pass on the GPU too.
//   - cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 (9.7.9.21 cvt: "d[31:16] = convert(a); d[15:0] =
//     convert(b)"): each half rounded to nearest even on its own, NaN and overflow per half.
//   - shfl.sync.bfly.b32 (9.7.9.7) for a row max / row sum over the 4 threads of a quad (lane
//     masks 1 and 2), the reduction an m64nNk16 accumulator row needs (a row lives in one quad).
//   - forms the device does not implement, refused when the module loads with a message that
//     names them, never mis-executed: packed half arithmetic (core/emu/insns/arith.cc), half
//     forms of the other transcendentals, and tcgen05.mma kinds other than .kind::f16 and its
//     .ws / .sp / .block_scale forms (core/emu/insns/tcgen05.cc).
#include <cmath>
#include <limits>

#include "isa_harness.h"

#include "core/emu/exec/scalar.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;
const float kInf = std::numeric_limits<float>::infinity();

// `insn %rD, %rS` (32-bit registers) for each input, one thread per input (up to 1024 a launch).
std::vector<std::uint32_t> sweep(IsaTest& t, const std::string& insn, const std::vector<std::uint32_t>& inputs) {
  std::vector<std::uint32_t> out;
  for (std::size_t base = 0; base < inputs.size(); base += 1024) {
    const std::size_t n = std::min<std::size_t>(1024, inputs.size() - base);
    std::vector<std::uint64_t> in(inputs.begin() + base, inputs.begin() + base + n);
    const std::string body =
        "  mov.u32 %r40, %tid.x;\n  mul.wide.u32 %rd1, %r40, 8;\n  add.s64 %rd2, %rd62, %rd1;\n  add.s64 %rd3, %rd63, %rd1;\n"
        "  ld.global.u32 %r1, [%rd2];\n  " + insn + " %r2, %r1;\n  st.global.u32 [%rd3], %r2;\n";
    std::vector<std::uint64_t> got = t.run(body, in, n, IsaTest::cfg(static_cast<std::uint32_t>(n)));
    for (auto v : got) out.push_back(static_cast<std::uint32_t>(v));
  }
  return out;
}

// Distance in units in the last place between two non-negative floats (their bit patterns are
// ordered like their values).
std::int64_t ulps(float a, float b) {
  return std::llabs(static_cast<std::int64_t>(f32(a)) - static_cast<std::int64_t>(f32(b)));
}

std::vector<std::uint32_t> ex2_inputs() {
  std::vector<std::uint32_t> v;
  for (int i = 0; i <= 2900; ++i) v.push_back(static_cast<std::uint32_t>(f32(-160.0f + 0.0998f * i)));  // -160 .. 129.4
  for (int i = 0; i < 400; ++i) v.push_back(static_cast<std::uint32_t>(f32(std::ldexp(1.0f, -30) * (i + 1) * 1e6f)));  // small
  for (int i = 0; i < 400; ++i) v.push_back(static_cast<std::uint32_t>(f32(-static_cast<float>(i) / 37.0f)));  // softmax's range
  return v;
}

// ex2.approx.f32 and .ftz.f32: within 2 ulp of the correctly rounded 2^a wherever that is a
// normal float (and +Inf beyond the range); without .ftz subnormal results are kept (2 ulp of the
// subnormal spacing), with .ftz they are +0.
TEST_F(Isa, Ex2ApproxF32IsWithinTwoUlpOfTheCorrectlyRoundedResult) {
  const std::vector<std::uint32_t> in = ex2_inputs();
  for (const bool ftz : {false, true}) {
    const std::vector<std::uint32_t> out = sweep(*this, ftz ? "ex2.approx.ftz.f32" : "ex2.approx.f32", in);
    int bad = 0;
    for (std::size_t i = 0; i < in.size() && bad < 10; ++i) {
      const float a = as_f(in[i]), got = as_f(out[i]);
      const long double exact = std::exp2l(static_cast<long double>(a));
      const float want = static_cast<float>(exact);  // correctly rounded (to within a double rounding)
      bool ok;
      if (exact >= std::ldexp(1.0L, 128)) ok = got == kInf;
      else if (want >= std::numeric_limits<float>::min() * 1.0000005f || !ftz) ok = std::isfinite(got) && got >= 0 && ulps(got, want) <= 2;
      else if (exact < std::ldexp(1.0L, -126) * (1 - std::ldexp(1.0L, -20))) ok = f32(got) == 0;  // flushed to +0
      else ok = true;  // on the normal/subnormal boundary either is within the ISA's bound
      if (!ok) {
        ++bad;
        ADD_FAILURE() << (ftz ? "ex2.approx.ftz.f32(" : "ex2.approx.f32(") << a << ") = " << got << " (0x" << std::hex << f32(got)
                      << "), correctly rounded " << want << " (0x" << f32(want) << ")" << std::dec;
      }
    }
  }
}

TEST_F(Isa, Ex2ApproxF32SpecialValuesAndSubnormals) {
  for (const std::string insn : {"ex2.approx.f32", "ex2.approx.ftz.f32"}) {
    SCOPED_TRACE(insn);
    EXPECT_EQ(op(insn, 32, {R(f32(-kInf))}), 0u) << "-Inf -> +0.0";
    EXPECT_EQ(op(insn, 32, {R(0x80000000)}), f32(1.0f)) << "-0.0 -> +1.0";
    EXPECT_EQ(op(insn, 32, {R(0)}), f32(1.0f)) << "+0.0 -> +1.0";
    EXPECT_EQ(op(insn, 32, {R(f32(kInf))}), f32(kInf)) << "+Inf -> +Inf";
    EXPECT_TRUE(std::isnan(as_f(op(insn, 32, {R(0x7FC00000)})))) << "NaN -> NaN";
    EXPECT_TRUE(std::isnan(as_f(op(insn, 32, {R(0xFFC00001)})))) << "NaN -> NaN";
    EXPECT_EQ(op(insn, 32, {R(f32(128.0f))}), f32(kInf)) << "2^128 overflows";
    // Subnormal inputs: 2^(+-tiny) is 1.0 correctly rounded; flushed to +-0 it is exactly 1.0.
    EXPECT_LE(ulps(as_f(op(insn, 32, {R(0x00000001)})), 1.0f), 2);
    EXPECT_LE(ulps(as_f(op(insn, 32, {R(0x807FFFFF)})), 1.0f), 2);
  }
  EXPECT_EQ(op("ex2.approx.ftz.f32", 32, {R(0x00000001)}), f32(1.0f));
  EXPECT_EQ(op("ex2.approx.ftz.f32", 32, {R(0x807FFFFF)}), f32(1.0f));
  // Subnormal results: kept without .ftz (2^-127 = 0x00400000, 2^-149 = 0x00000001, each exact,
  // so within 2 ulp of them), flushed to +0 with it.
  EXPECT_LE(std::llabs(static_cast<std::int64_t>(op("ex2.approx.f32", 32, {R(f32(-127.0f))})) - 0x00400000), 2);
  EXPECT_LE(std::llabs(static_cast<std::int64_t>(op("ex2.approx.f32", 32, {R(f32(-130.0f))})) - 0x00080000), 2);
  EXPECT_LE(op("ex2.approx.f32", 32, {R(f32(-149.0f))}), 3u);
  for (float a : {-127.0f, -130.0f, -140.0f, -149.0f, -149.5f})
    EXPECT_EQ(op("ex2.approx.ftz.f32", 32, {R(f32(a))}), 0u) << "ex2.approx.ftz.f32(" << a << ") flushes to +0";
  EXPECT_EQ(op("ex2.approx.ftz.f32", 32, {R(f32(-126.0f))}), 0x00800000u) << "2^-126 is normal, kept";
}

// .f16: relative error at most 2^-9.9 where 2^a is a normal f16 (2^-14 .. 65504).
TEST_F(Isa, Ex2ApproxF16AndF16x2WithinTheDocumentedRelativeError) {
  std::vector<std::uint32_t> in;
  for (std::uint32_t h = 0; h < 0x10000; h += 3) in.push_back(h);
  const std::vector<std::uint32_t> out = sweep(*this, "ex2.approx.f16", in);
  const double bound = std::exp2(-9.9);
  int bad = 0, checked = 0;
  for (std::size_t i = 0; i < in.size() && bad < 10; ++i) {
    const double a = f16_to_f32(static_cast<std::uint16_t>(in[i]));
    const double exact = std::exp2(a), got = f16_to_f32(static_cast<std::uint16_t>(out[i]));
    if (std::isnan(a)) {
      if (!std::isnan(got)) { ++bad; ADD_FAILURE() << "ex2.approx.f16(NaN) = " << got; }
      continue;
    }
    if (exact < std::ldexp(1.0, -14) || exact > 65504) continue;
    ++checked;
    if (!(std::fabs(got - exact) <= bound * exact)) {
      ++bad;
      ADD_FAILURE() << "ex2.approx.f16(" << a << ") = " << got << ", exact " << exact;
    }
  }
  EXPECT_GT(checked, 5000);
  // The corner cases of the .f16 table.
  EXPECT_EQ(op("ex2.approx.f16", 16, {H(0xFC00)}), 0u) << "-Inf -> +0.0";
  EXPECT_EQ(op("ex2.approx.f16", 16, {H(0x8000)}), 0x3C00u) << "-0.0 -> +1.0";
  EXPECT_EQ(op("ex2.approx.f16", 16, {H(0x0000)}), 0x3C00u) << "+0.0 -> +1.0";
  EXPECT_EQ(op("ex2.approx.f16", 16, {H(0x7C00)}), 0x7C00u) << "+Inf -> +Inf";
  const std::uint64_t nan = op("ex2.approx.f16", 16, {H(0x7E00)});
  EXPECT_TRUE((nan & 0x7C00) == 0x7C00 && (nan & 0x3FF) != 0) << "NaN -> NaN";
  EXPECT_EQ(op("ex2.approx.f16", 16, {H(0x4C00)}), 0x7C00u) << "2^16 overflows f16";
  // .f16x2: the low half of d from the low half of a. a = {hi: 3.0, lo: -1.0} -> {8.0, 0.5}.
  const std::uint64_t d = op("ex2.approx.f16x2", 32, {R(0x4200BC00)});
  const double hi = f16_to_f32(static_cast<std::uint16_t>(d >> 16)), lo = f16_to_f32(static_cast<std::uint16_t>(d));
  EXPECT_LE(std::fabs(hi - 8.0), bound * 8.0) << std::hex << d;
  EXPECT_LE(std::fabs(lo - 0.5), bound * 0.5) << std::hex << d;
}

// .bf16 (only as ex2.approx.ftz.bf16{x2}): relative error at most 2^-7 for normal results;
// subnormal inputs give +1.0 and subnormal results +0 (the .ftz table).
TEST_F(Isa, Ex2ApproxFtzBf16AndBf16x2WithinTheDocumentedRelativeErrorAndFlushing) {
  std::vector<std::uint32_t> in;
  for (std::uint32_t h = 0; h < 0x10000; h += 5) in.push_back(h);
  const std::vector<std::uint32_t> out = sweep(*this, "ex2.approx.ftz.bf16", in);
  const double bound = std::exp2(-7.0), min_normal = std::ldexp(1.0, -126);
  int bad = 0;
  for (std::size_t i = 0; i < in.size() && bad < 10; ++i) {
    const std::uint16_t h = static_cast<std::uint16_t>(in[i]);
    const double a = bf16_to_f32(h), got = bf16_to_f32(static_cast<std::uint16_t>(out[i]));
    if (std::isnan(a)) continue;
    const bool sub_in = (h & 0x7F80) == 0 && (h & 0x7F) != 0;
    const double exact = sub_in ? 1.0 : std::exp2(a);
    bool ok;
    if (exact >= std::ldexp(1.0, 128)) ok = std::isinf(got) && got > 0;
    else if (exact >= min_normal * (1 + 2 * bound)) ok = std::fabs(got - exact) <= bound * exact;
    else if (exact < min_normal * (1 - 2 * bound)) ok = (out[i] & 0xFFFF) == 0;  // a subnormal result flushed to +0
    else ok = true;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << "ex2.approx.ftz.bf16(0x" << std::hex << h << " = " << a << ") = 0x" << out[i] << std::dec << " (" << got
                    << "), exact " << exact;
    }
  }
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0xFF80)}), 0u) << "-Inf -> +0.0";
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0x8001)}), 0x3F80u) << "-subnormal -> +1.0";
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0x8000)}), 0x3F80u) << "-0.0 -> +1.0";
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0x0000)}), 0x3F80u) << "+0.0 -> +1.0";
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0x007F)}), 0x3F80u) << "+subnormal -> +1.0";
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0x7F80)}), 0x7F80u) << "+Inf -> +Inf";
  const std::uint64_t nan = op("ex2.approx.ftz.bf16", 16, {H(0x7FC0)});
  EXPECT_TRUE((nan & 0x7F80) == 0x7F80 && (nan & 0x7F) != 0) << "NaN -> NaN";
  EXPECT_EQ(op("ex2.approx.ftz.bf16", 16, {H(0xC302)}), 0u) << "2^-130 is subnormal in bf16: flushed";
  // .bf16x2: a = {hi: -2.0, lo: 4.0} -> {0.25, 16.0}.
  const std::uint64_t d = op("ex2.approx.ftz.bf16x2", 32, {R(0xC0004080)});
  const double hi = bf16_to_f32(static_cast<std::uint16_t>(d >> 16)), lo = bf16_to_f32(static_cast<std::uint16_t>(d));
  EXPECT_LE(std::fabs(hi - 0.25), bound * 0.25) << std::hex << d;
  EXPECT_LE(std::fabs(lo - 16.0), bound * 16.0) << std::hex << d;
}

// A form the device refuses at load: a Fault naming the instruction, with `why` in the message.
void expect_refused(IsaTest& t, const std::string& line, const std::string& why, const std::string& target = "") {
  std::string text = IsaTest::module("  " + line + "\n");
  if (!target.empty()) {
    text.replace(text.find("sm_90a"), 6, target);
    text.replace(text.find(".version 8.0"), 12, ".version 8.7");
  }
  try {
    t.dev.load(text);
    ADD_FAILURE() << "loading a kernel with `" << line << "` succeeded";
  } catch (const Fault& f) {
    EXPECT_EQ(f.report.kind, ReportKind::Unsupported) << line;
    EXPECT_NE(f.report.message.find(why), std::string::npos) << line << ": " << f.report.message;
  }
}

// Spellings 9.7.4.10 does not define (.ftz on f16, none on bf16), .f64 forms 9.7.3 does not
// define, and the half forms of tanh (9.7.4.9, defined but not implemented here).
TEST_F(Isa, Ex2AndTanhFormsOutsideTheIsaOrNotImplementedAreRefused) {
  expect_refused(*this, "ex2.approx.ftz.f16 %h1, %h2;", "ex2.approx.ftz.f16/.f16x2 is not a PTX form");
  expect_refused(*this, "ex2.approx.ftz.f16x2 %r1, %r2;", "ex2.approx.ftz.f16/.f16x2 is not a PTX form");
  expect_refused(*this, "ex2.approx.bf16 %h1, %h2;", "without .ftz is not a PTX form");
  expect_refused(*this, "ex2.approx.bf16x2 %r1, %r2;", "without .ftz is not a PTX form");
  expect_refused(*this, "ex2.approx.f64 %rd1, %rd2;", "ex2.f64 is not a PTX form");
  expect_refused(*this, "lg2.approx.f64 %rd1, %rd2;", "lg2.f64 is not a PTX form");
  expect_refused(*this, "tanh.approx.f16 %h1, %h2;", "tanh on .f16/.f16x2/.bf16/.bf16x2 is not implemented");
  expect_refused(*this, "tanh.approx.bf16x2 %r1, %r2;", "tanh on .f16/.f16x2/.bf16/.bf16x2 is not implemented");
}

// ---- cvt.rn.{f16x2,bf16x2}.f32 ---------------------------------------------------------------

TEST_F(Isa, CvtRnF16x2RoundsEachHalfToNearestEvenFirstSourceHigh) {
  const float ulp = std::ldexp(1.f, -10);  // f16 spacing at 1.0
  // a = 1 + ulp/2 (tie -> even 1.0 = 0x3C00), b = 1 + 3 ulp/2 (tie -> even 1 + 2 ulp = 0x3C02).
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(1.f + ulp / 2)), R(f32(1.f + 3 * ulp / 2))}), 0x3C003C02u);
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(1.f + 3 * ulp / 2)), R(f32(1.f + ulp / 2))}), 0x3C023C00u);
  // Just above the tie rounds up, just below down.
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(1.f + ulp / 2 + ulp / 64)), R(f32(1.f + ulp / 2 - ulp / 64))}), 0x3C013C00u);
  // Negative values and an f16 subnormal (2^-24 is the smallest; 3 * 2^-25 ties to even 2 * 2^-24).
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(-0.5f)), R(f32(3 * std::ldexp(1.f, -25)))}), 0xB8000002u);
  // Overflow: |x| >= 65520 rounds to +-Inf under .rn; 65519 stays 65504 (0x7BFF).
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(65520.f)), R(f32(-1e6f))}), 0x7C00FC00u);
  EXPECT_EQ(op("cvt.rn.f16x2.f32", 32, {R(f32(65519.f)), R(f32(kInf))}), 0x7BFF7C00u);
  // .rz: toward zero, so overflow stops at the largest finite value.
  EXPECT_EQ(op("cvt.rz.f16x2.f32", 32, {R(f32(1e6f)), R(f32(-1e6f))}), 0x7BFFFBFFu);
  // NaN in one half is a NaN there and leaves the other half alone.
  const std::uint64_t n = op("cvt.rn.f16x2.f32", 32, {R(0x7FC00000), R(f32(2.f))});
  EXPECT_EQ(n & 0xFFFF, 0x4000u);
  EXPECT_EQ((n >> 16) & 0x7C00, 0x7C00u);
  EXPECT_NE((n >> 16) & 0x3FF, 0u) << "NaN stays NaN";
  const std::uint64_t m = op("cvt.rn.f16x2.f32", 32, {R(f32(2.f)), R(0xFFC00000)});
  EXPECT_EQ(m >> 16, 0x4000u);
  EXPECT_TRUE((m & 0x7C00) == 0x7C00 && (m & 0x3FF) != 0) << std::hex << m;
}

TEST_F(Isa, CvtRnBf16x2RoundsEachHalfToNearestEvenFirstSourceHigh) {
  // 0x3F808000 is the tie between 0x3F80 and 0x3F81 (-> even 0x3F80); 0x3F818000 -> 0x3F82.
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(0x3F818000), R(0x3F808000)}), 0x3F823F80u);
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(0x3F808001), R(0x3F807FFF)}), 0x3F813F80u);
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(0xC0490FDB), R(0x3DCCCCCD)}), 0xC0493DCDu);  // -pi, 0.1
  // Overflow: the largest f32 rounds past the largest bf16 (0x7F7F) to Inf under .rn, not under .rz.
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(0x7F7FFFFF), R(0xFF7FFFFF)}), 0x7F80FF80u);
  EXPECT_EQ(op("cvt.rz.bf16x2.f32", 32, {R(0x7F7FFFFF), R(0xFF7FFFFF)}), 0x7F7FFF7Fu);
  EXPECT_EQ(op("cvt.rn.bf16x2.f32", 32, {R(f32(-kInf)), R(f32(kInf))}), 0xFF807F80u);
  // NaN per half, the other half untouched (a NaN whose payload sits only in the low bits must
  // not round into an infinity).
  const std::uint64_t n = op("cvt.rn.bf16x2.f32", 32, {R(0x7F800001), R(f32(-1.f))});
  EXPECT_EQ(n & 0xFFFF, 0xBF80u);
  EXPECT_EQ((n >> 16) & 0x7F80, 0x7F80u);
  EXPECT_NE((n >> 16) & 0x7F, 0u) << "NaN stays NaN";
}

// ---- shfl.sync.bfly: a quad's row max and row sum --------------------------------------------

TEST_F(Isa, ShflBflyOverAQuadGivesEveryLaneTheRowMaxAndSum) {
  std::vector<std::uint64_t> in(32);
  float v[32];
  for (int l = 0; l < 32; ++l) {
    v[l] = static_cast<float>((l * 7) % 11) * 0.25f - 1.0f;
    in[l] = f32(v[l]);
  }
  const std::string body =
      "  mov.u32 %r40, %tid.x;\n  mul.wide.u32 %rd1, %r40, 8;\n  add.s64 %rd2, %rd62, %rd1;\n"
      "  mul.wide.u32 %rd3, %r40, 16;\n  add.s64 %rd4, %rd63, %rd3;\n"
      "  ld.global.f32 %f1, [%rd2];\n  mov.b32 %r1, %f1;\n"
      // max: lane ^ 1, then lane ^ 2
      "  shfl.sync.bfly.b32 %r2, %r1, 1, 0x1f, 0xffffffff;\n  mov.b32 %f2, %r2;\n  max.f32 %f3, %f1, %f2;\n"
      "  mov.b32 %r3, %f3;\n  shfl.sync.bfly.b32 %r4, %r3, 2, 0x1f, 0xffffffff;\n  mov.b32 %f4, %r4;\n  max.f32 %f5, %f3, %f4;\n"
      // sum: the same butterfly
      "  shfl.sync.bfly.b32 %r5, %r1, 1, 0x1f, 0xffffffff;\n  mov.b32 %f6, %r5;\n  add.f32 %f7, %f1, %f6;\n"
      "  mov.b32 %r6, %f7;\n  shfl.sync.bfly.b32 %r7, %r6, 2, 0x1f, 0xffffffff;\n  mov.b32 %f8, %r7;\n  add.f32 %f9, %f7, %f8;\n"
      "  st.global.f32 [%rd4], %f5;\n  st.global.f32 [%rd4+8], %f9;\n";
  std::vector<std::uint64_t> out = run(body, in, 64, cfg(32));
  for (int l = 0; l < 32; ++l) {
    const int q = l & ~3;
    const float mx = std::max(std::max(v[q], v[q + 1]), std::max(v[q + 2], v[q + 3]));
    // The butterfly adds (v0 + v1) + (v2 + v3) in every lane (the partner's pair comes second
    // or first; f32 addition is commutative), exact here anyway.
    const float sum = (v[q] + v[q + 1]) + (v[q + 2] + v[q + 3]);
    EXPECT_EQ(as_f(out[2 * l]), mx) << "lane " << l;
    EXPECT_EQ(as_f(out[2 * l + 1]), sum) << "lane " << l;
  }
}

// ---- refusals --------------------------------------------------------------------------------

// Packed half arithmetic (PTX ISA 9.7.4): the forms test_emu_isa_misc.cc does not already try.
TEST_F(Isa, MorePackedHalfArithmeticIsRefusedNotComputed) {
  for (const std::string line : {"max.f16x2 %r1, %r2, %r3;", "max.NaN.bf16x2 %r1, %r2, %r3;", "neg.f16x2 %r1, %r2;",
                                  "abs.bf16x2 %r1, %r2;", "add.ftz.sat.f16x2 %r1, %r2, %r3;", "mul.ftz.f16x2 %r1, %r2, %r3;",
                                  "sub.rn.f16x2 %r1, %r2, %r3;", "fma.rn.relu.bf16x2 %r1, %r2, %r3, %r4;", "add.rn.bf16x2 %r1, %r2, %r3;",
                                  "fma.rn.sat.f16x2 %r1, %r2, %r3, %r4;", "min.bf16x2 %r1, %r2, %r3;"})
    expect_refused(*this, line, "packed half arithmetic is not implemented");
}

// Scalar modifiers that used to be ignored (silently computing the plain form):
//   - min/max.NaN (PTX ISA 9.7.3 min/max, 9.7.4.7/8): "the result is canonical NaN if either of
//     the inputs is NaN"; without .NaN the other input is returned. The faulty twin of each row
//     max: plain max drops the NaN.
//   - .sat on .f16/.bf16 add/sub/mul/fma (9.7.4.1-4): clamps to [0.0, 1.0], NaN to +0.0.
//   - .ftz on .f16 (9.7.4 "Subnormal numbers"): subnormal inputs and results flush to +-0.
//   - .xorsign.abs, fma .relu / .oob: refused.
TEST_F(Isa, MinMaxNaNSatAndFtzOnScalarHalvesFollowTheIsa) {
  const std::uint64_t qnan = 0x7FC00000;
  EXPECT_EQ(op("max.NaN.f32", 32, {R(f32(1.f)), R(qnan)}), 0x7FFFFFFFu);
  EXPECT_EQ(op("min.NaN.f32", 32, {R(0xFFC00001), R(f32(1.f))}), 0x7FFFFFFFu);
  EXPECT_EQ(op("max.NaN.f32", 32, {R(f32(1.f)), R(f32(-2.f))}), f32(1.f));
  EXPECT_EQ(op("max.f32", 32, {R(f32(1.f)), R(qnan)}), f32(1.f));
  EXPECT_EQ(op("max.NaN.f16", 16, {H(0x3C00), H(0x7E00)}), 0x7FFFu);
  EXPECT_EQ(op("min.NaN.bf16", 16, {H(0x7FC0), H(0x3F80)}), 0x7FFFu);
  EXPECT_EQ(op("max.bf16", 16, {H(0x7FC0), H(0x3F80)}), 0x3F80u);
  EXPECT_EQ(op("add.sat.f16", 16, {H(0x3A00), H(0x3A00)}), 0x3C00u);  // 0.75 + 0.75 -> 1.0
  EXPECT_EQ(op("add.sat.f16", 16, {H(0xBC00), H(0x3800)}), 0x0000u);  // -1 + 0.5 -> 0.0
  EXPECT_EQ(op("mul.rn.sat.bf16", 16, {H(0x4000), H(0x3F80)}), 0x3F80u);  // 2 * 1 -> 1.0
  EXPECT_EQ(op("add.f16", 16, {H(0x3A00), H(0x3A00)}), 0x3E00u);       // 1.5 without .sat
  EXPECT_EQ(op("add.ftz.f16", 16, {H(0x0001), H(0x0000)}), 0x0000u);  // subnormal input flushed
  EXPECT_EQ(op("add.f16", 16, {H(0x0001), H(0x0000)}), 0x0001u);
  EXPECT_EQ(op("mul.ftz.f16", 16, {H(0x0400), H(0x3800)}), 0x0000u);  // 2^-14 * 0.5 = subnormal result flushed
  EXPECT_EQ(op("mul.f16", 16, {H(0x0400), H(0x3800)}), 0x0200u);
  expect_refused(*this, "max.xorsign.abs.f32 %r1, %r2, %r3;", ".xorsign is not implemented");
  expect_refused(*this, "fma.rn.relu.bf16 %h1, %h2, %h3, %h4;", ".relu is not implemented");
  expect_refused(*this, "fma.rn.oob.f16 %h1, %h2, %h3, %h4;", ".oob is not implemented");
  expect_refused(*this, "add.NaN.f32 %r1, %r2, %r3;", ".NaN is a modifier of min/max only");
}

// tcgen05.mma (PTX ISA 9.7.16 "tcgen05.mma"): only .kind::f16, without .ws/.sp/.block_scale and
// without the disable-output-lane / scale-input-d operands, is implemented.
TEST_F(Isa, Tcgen05MmaKindsAndFormsOtherThanPlainF16AreRefused) {
  const std::string sm100 = "sm_100a";
  for (const std::string kind : {"tf32", "f8f6f4", "i8", "mxf8f6f4.block_scale", "mxf4.block_scale", "mxf4nvf4.block_scale"})
    expect_refused(*this, "tcgen05.mma.cta_group::1.kind::" + kind + " [%r1], %rd1, %rd2, %r2, %p1;",
                   "tcgen05.mma kinds other than .kind::f16 are not implemented", sm100);
  expect_refused(*this, "tcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "tcgen05.mma.ws/.sp/.block_scale are not implemented",
                 sm100);
  expect_refused(*this, "tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd2, [%r3], %r2, %p1;",
                 "tcgen05.mma.ws/.sp/.block_scale are not implemented", sm100);
  expect_refused(*this, "tcgen05.mma.cta_group::1.kind::f16.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;",
                 "tcgen05.mma.ws/.sp/.block_scale are not implemented", sm100);
  expect_refused(*this, "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%r4, %r5, %r6, %r7}, %p1;",
                 "disable-output-lane or scale-input-d operands is not implemented", sm100);
  expect_refused(*this, "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, 0;",
                 "disable-output-lane or scale-input-d operands is not implemented", sm100);
}

}  // namespace
}  // namespace mgpu::emu::isa
