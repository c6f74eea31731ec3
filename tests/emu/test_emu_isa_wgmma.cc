// Spec tests for core/emu/insns/wgmma.cc with the A operand in registers (PTX ISA 9.7.15.5.2
// "wgmma.mma_async", second syntax form:
//   wgmma.mma_async.sync.aligned.shape.dtype.f16.f16  d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b;
//   wgmma.mma_async.sync.aligned.shape.dtype.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b;
// "D = A*B + D" when scale-d is true, "D = A*B" when false; imm-scale-a/-b of -1 negate A/B;
// imm-trans-b 1 reads B MN-major) and the wgmma.fence rule for it (9.7.15.7.1 "wgmma.fence":
// the fence must come "Between a register access by a thread in the warpgroup and any
// wgmma.mma_async instruction that accesses the same registers, either as accumulator or input
// register containing fragments of matrix A, except when these are accumulator register
// accesses across multiple wgmma.mma_async instructions of the same shape").
//
// Every thread of the warpgroup loads its A fragment into four .b32 registers by the documented
// layout, written here from two sources independently of the emulator's own tables:
//   - the ISA figure "WGMMA .m64nNk16 register fragment layout for matrix A" (9.7.15.5.1.1.1
//     "Matrix Fragments for wgmma.mma_async.m64nNk16"): warp w holds rows 16w..16w+15; with
//     groupID = lane / 4 and threadID_in_group = lane % 4, a0,a1 are row groupID, columns
//     2*threadID_in_group + {0,1}; a2,a3 the same columns 8 rows further down; a4..a7 repeat
//     a0..a3 8 columns to the right; a 2i / a 2i+1 are the low / high half of register i;
//   - CuTe's ALayout_64x16 (cute/atom/mma_traits_sm90_gmma.hpp): Shape<<4,8,4>,<2,2,2>>,
//     Stride<<128,1,16>,<64,8,512>> over a column-major 64x16 tile (index = m + 64 k); value j is
//     half j % 2 of register j / 2 (CuTe packs two 16-bit values into a uint32_t, little end first).
// The accumulator uses the same ISA figure for D (CuTe CLayout_64xN: the same strides with N/8
// in place of the last 2). B comes from shared memory through a no-swizzle descriptor in
// CUTLASS's canonical INTERLEAVE layouts (cute/arch/mma_sm90_desc.hpp, make_gmma_desc):
//   K-major:  ((8,n),(T,2k)):((1T,SBO),(1,LBO))   -- 8 rows of 16 bytes, core matrices along K LBO apart
//   MN-major: ((T,1,n),(8,k)):((1,T,SBO),(1T,LBO)) -- T = 8 elements of 2 bytes per 16-byte row
// and D is compared with a float64 reference. The values are small multiples of 1/8, exact in
// bf16 and f16 and in every f32 sum, so any misplaced element shows as an exact mismatch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "core/emu/exec/scalar.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::all;
using emu_test::clean;
using emu_test::count_seeds;
using emu_test::kSeeds;

// (row, column) of element j (0..7) of thread t's A fragment, from the ISA figure.
std::pair<int, int> isa_a_coord(int t, int j) {
  const int warp = t / 32, lane = t % 32, group = lane / 4, tig = lane % 4;
  const int row = 16 * warp + group + ((j == 2 || j == 3 || j == 6 || j == 7) ? 8 : 0);
  const int col = 2 * tig + (j & 1) + (j >= 4 ? 8 : 0);
  return {row, col};
}

// The same from CuTe's ALayout_64x16.
std::pair<int, int> cute_a_coord(int t, int j) {
  const int idx = (t % 4) * 128 + ((t / 4) % 8) * 1 + (t / 32) * 16 + (j % 2) * 64 + ((j / 2) % 2) * 8 + (j / 4) * 512;
  return {idx % 64, idx / 64};
}

// (row, column) of accumulator register r of thread t (ISA figure for D; CuTe CLayout_64xN).
std::pair<int, int> d_coord(int t, int r) {
  const int idx = (t % 4) * 128 + ((t / 4) % 8) * 1 + (t / 32) * 16 + (r % 2) * 64 + ((r / 2) % 2) * 8 + (r / 4) * 512;
  return {idx % 64, idx / 64};
}

TEST(WgmmaRegisterA, IsaFigureAndCuteAgreeOnTheAFragment) {
  std::vector<int> seen(64 * 16, 0);
  for (int t = 0; t < 128; ++t)
    for (int j = 0; j < 8; ++j) {
      ASSERT_EQ(isa_a_coord(t, j), cute_a_coord(t, j)) << "thread " << t << " a" << j;
      ++seen[isa_a_coord(t, j).first * 16 + isa_a_coord(t, j).second];
    }
  for (int s : seen) EXPECT_EQ(s, 1);  // the fragments cover the 64x16 tile exactly once
}

constexpr std::uint32_t kA1 = 0, kA2 = 2048, kB = 4096;  // input byte offsets; C follows B

struct WgmmaRegA : ::testing::Test {
  Device dev;
  int n = 64;
  bool bf16 = true, trans_b = false;
  std::vector<double> A1, A2, B, C;  // 64x16, 64x16, 16xN (B[k][n]), 64xN

  void make(int n_, bool bf16_, bool trans_b_ = false) {
    n = n_;
    bf16 = bf16_;
    trans_b = trans_b_;
    A1.assign(64 * 16, 0);
    A2.assign(64 * 16, 0);
    B.assign(16 * n, 0);
    C.assign(64 * n, 0);
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 16; ++k) {
        A1[m * 16 + k] = ((m * 16 + k) * 7 % 17 - 8) / 4.0;
        A2[m * 16 + k] = ((m * 5 + k * 3) % 11 - 5) / 2.0;
      }
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < n; ++j) B[k * n + j] = ((k * n + j) * 5 % 13 - 6) / 2.0;
    for (int m = 0; m < 64; ++m)
      for (int j = 0; j < n; ++j) C[m * n + j] = ((m - j) % 9) / 8.0;
  }

  std::uint16_t half(double v) const { return bf16 ? f32_to_bf16_rn(static_cast<float>(v)) : f32_to_f16_rn(static_cast<float>(v)); }
  std::uint32_t c_off() const { return kB + 32u * static_cast<std::uint32_t>(n); }

  // Shared byte offset of B[k][j] (no swizzle; see the file comment). K-major: LBO 128, SBO 256.
  // MN-major: SBO 128 (8-column groups), LBO = N * 16 (8-row groups of K).
  std::uint32_t b_offset(int k, int j) const {
    if (!trans_b) return (j / 8) * 256 + (k / 8) * 128 + (j % 8) * 16 + (k % 8) * 2;
    return (j % 8) * 2 + (j / 8) * 128 + (k % 8) * 16 + (k / 8) * (16 * n);
  }
  std::uint64_t desc_bits() const {
    const std::uint64_t lbo = trans_b ? 16u * n : 128, sbo = trans_b ? 128 : 256;
    return ((lbo >> 4) << 16) | ((sbo >> 4) << 32);
  }

  std::vector<std::uint8_t> input() const {
    std::vector<std::uint8_t> in(c_off() + 128 * (n / 2) * 4, 0);
    for (int t = 0; t < 128; ++t)
      for (int j = 0; j < 8; ++j) {
        auto [m, k] = isa_a_coord(t, j);
        std::uint16_t h1 = half(A1[m * 16 + k]), h2 = half(A2[m * 16 + k]);
        std::memcpy(&in[kA1 + t * 16 + 2 * j], &h1, 2);  // register j / 2, half j % 2
        std::memcpy(&in[kA2 + t * 16 + 2 * j], &h2, 2);
      }
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < n; ++j) {
        std::uint16_t h = half(B[k * n + j]);
        std::memcpy(&in[kB + b_offset(k, j)], &h, 2);
      }
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < n / 2; ++r) {
        auto [m, j] = d_coord(t, r);
        float c = static_cast<float>(C[m * n + j]);
        std::memcpy(&in[c_off() + (t * (n / 2) + r) * 4], &c, 4);
      }
    return in;
  }

  std::string acc() const {
    std::string s = "{";
    for (int r = 0; r < n / 2; ++r) s += (r ? ", %f" : "%f") + std::to_string(r);
    return s + "}";
  }
  std::string mma(const std::string& a_regs, const std::string& pred, int sa = 1, int sb = 1) const {
    const std::string t = bf16 ? "bf16" : "f16";
    return "  wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + t + "." + t + " " + acc() + ", " + a_regs +
           ", %rd1, " + pred + ", " + std::to_string(sa) + ", " + std::to_string(sb) + ", " + (trans_b ? "1" : "0") + ";\n";
  }
  static std::string a1() { return "{%r10, %r11, %r12, %r13}"; }
  static std::string a2() { return "{%r14, %r15, %r16, %r17}"; }

  // One warpgroup: B copied to shared memory (fenced for the async proxy), A1/A2 fragments into
  // %r10..%r13 / %r14..%r17, C into the accumulators %f0.., scale-d from the parameter into %p1
  // (%p2 false, %p3 true), `middle`, then the accumulators stored per thread.
  std::string kernel(const std::string& name, const std::string& middle) const {
    const int nb = 32 * n;  // B bytes
    std::string s = ".visible .entry " + name + "(.param .u64 pin, .param .u64 pout, .param .u32 pscale)\n{\n"
                    "  .reg .pred %p<4>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<" + std::to_string(n / 2 + 4) + ">;\n"
                    "  .shared .align 1024 .b8 sm[" + std::to_string(nb) + "];\n"
                    "  ld.param.u64 %rd2, [pin];\n  ld.param.u64 %rd3, [pout];\n  ld.param.u32 %r20, [pscale];\n"
                    "  setp.ne.u32 %p1, %r20, 0;\n  setp.ne.u32 %p2, %r20, %r20;\n  setp.eq.u32 %p3, %r20, %r20;\n"
                    "  mov.u32 %r1, %tid.x;\n  shl.b32 %r2, %r1, 2;\n  cvt.u64.u32 %rd4, %r2;\n"
                    "  add.s64 %rd5, %rd2, " + std::to_string(kB) + ";\n  add.s64 %rd5, %rd5, %rd4;\n"
                    "  mov.u32 %r3, sm;\n  add.u32 %r4, %r3, %r2;\n";
    for (int i = 0; i < nb / 512; ++i)
      s += "  ld.global.u32 %r5, [%rd5+" + std::to_string(512 * i) + "];\n  st.shared.u32 [%r4+" + std::to_string(512 * i) + "], %r5;\n";
    s += "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
         "  shl.b32 %r6, %r1, 4;\n  cvt.u64.u32 %rd6, %r6;\n  add.s64 %rd7, %rd2, %rd6;\n";
    for (int i = 0; i < 4; ++i) s += "  ld.global.u32 %r" + std::to_string(10 + i) + ", [%rd7+" + std::to_string(kA1 + 4 * i) + "];\n";
    for (int i = 0; i < 4; ++i) s += "  ld.global.u32 %r" + std::to_string(14 + i) + ", [%rd7+" + std::to_string(kA2 + 4 * i) + "];\n";
    s += "  mul.wide.u32 %rd8, %r1, " + std::to_string(2 * n) + ";\n  add.s64 %rd9, %rd2, %rd8;\n  add.s64 %rd9, %rd9, " +
         std::to_string(c_off()) + ";\n  add.s64 %rd10, %rd3, %rd8;\n";
    for (int r = 0; r < n / 2; ++r) s += "  ld.global.f32 %f" + std::to_string(r) + ", [%rd9+" + std::to_string(4 * r) + "];\n";
    s += "  shr.u32 %r7, %r3, 4;\n  cvt.u64.u32 %rd1, %r7;\n  or.b64 %rd1, %rd1, " + std::to_string(desc_bits()) + ";\n";
    s += middle;
    for (int r = 0; r < n / 2; ++r) s += "  st.global.f32 [%rd10+" + std::to_string(4 * r) + "], %f" + std::to_string(r) + ";\n";
    return s + "  ret;\n}\n";
  }

  static std::string header() { return ".version 8.0\n.target sm_90a\n.address_size 64\n"; }

  // Runs `name` of module `m`; D per thread (n/2 floats each) into `d` when given.
  LaunchResult launch(LoadedModule& m, const char* name, std::uint32_t scale_d, std::uint64_t seed, std::vector<float>* d = nullptr,
                      bool races = false) {
    std::vector<std::uint8_t> in = input();
    std::uint64_t din = dev.memory().alloc(in.size());
    std::memcpy(dev.memory().find(din, in.size()), in.data(), in.size());
    const std::size_t out_bytes = 128 * (n / 2) * 4;
    std::uint64_t dout = dev.memory().alloc(out_bytes);
    std::memset(dev.memory().find(dout, out_bytes), 0, out_bytes);
    LaunchConfig c;
    c.block[0] = 128;
    c.seed = seed;
    c.detect_races = races;
    void* args[] = {&din, &dout, &scale_d};
    LaunchResult r = dev.launch(m, name, c, args);
    if (d) {
      d->resize(128 * (n / 2));
      std::memcpy(d->data(), dev.memory().find(dout, out_bytes), out_bytes);
    }
    return r;
  }

  // sum_k (sa A[m][k]) (sb B[k][j]), in float64.
  double product(const std::vector<double>& A, int m, int j, int sa = 1, int sb = 1) const {
    double s = 0;
    for (int k = 0; k < 16; ++k) s += sa * A[m * 16 + k] * (sb * B[k * n + j]);
    return s;
  }

  // D from the device against `want(m, j)`, every register of every thread.
  template <typename F>
  void expect_d(const std::vector<float>& d, F want, const std::string& what) const {
    int bad = 0;
    for (int t = 0; t < 128 && bad < 8; ++t)
      for (int r = 0; r < n / 2; ++r) {
        auto [m, j] = d_coord(t, r);
        const double w = want(m, j);
        if (static_cast<double>(d[t * (n / 2) + r]) != w) {
          ADD_FAILURE() << what << ": thread " << t << " d" << r << " = D[" << m << "][" << j << "] is " << d[t * (n / 2) + r]
                        << ", float64 reference " << w;
          if (++bad >= 8) break;
        }
      }
  }
};

std::string one_mma(const WgmmaRegA& f, int sa = 1, int sb = 1) {
  return "  wgmma.fence.sync.aligned;\n" + f.mma(WgmmaRegA::a1(), "%p1", sa, sb) +
         "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n";
}

// D = A x B + C for N = 64, 128, 256 with bf16 and f16 inputs (scale-d true), and D = A x B
// (scale-d false: "the input from the accumulator matrix D is not utilized").
TEST_F(WgmmaRegA, DEqualsAxBPlusDForEveryNAndType) {
  for (bool b : {true, false})
    for (int nn : {64, 128, 256}) {
      make(nn, b);
      LoadedModule& m = dev.load(header() + kernel("k", one_mma(*this)));
      for (std::uint32_t scale_d : {1u, 0u}) {
        std::vector<float> d;
        LaunchResult r = launch(m, "k", scale_d, 1, &d);
        ASSERT_TRUE(r.ok) << all(r);
        EXPECT_TRUE(r.reports.empty()) << all(r);
        const std::string what = std::string(b ? "bf16" : "f16") + " m64n" + std::to_string(nn) + "k16 scale-d " + std::to_string(scale_d);
        expect_d(d, [&](int mm, int j) { return (scale_d ? C[mm * n + j] : 0.0) + product(A1, mm, j); }, what);
      }
    }
}

// imm-scale-a / imm-scale-b of -1 negate A / B ("The qualifiers imm-scale-a and imm-scale-b ...
// the matrices A and B are negated when the value is -1"), with A in registers too.
TEST_F(WgmmaRegA, ImmScaleMinusOneNegatesAOrB) {
  make(64, true);
  for (auto [sa, sb] : {std::pair{-1, 1}, std::pair{1, -1}, std::pair{-1, -1}}) {
    LoadedModule& m = dev.load(header() + kernel("k", one_mma(*this, sa, sb)));
    std::vector<float> d;
    LaunchResult r = launch(m, "k", 1, 1, &d);
    ASSERT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(r.reports.empty()) << all(r);
    expect_d(d, [&](int mm, int j) { return C[mm * n + j] + product(A1, mm, j, sa, sb); },
             "imm-scale-a " + std::to_string(sa) + " imm-scale-b " + std::to_string(sb));
  }
}

// imm-trans-b 1: B read MN-major (the only transpose the register-A form has).
TEST_F(WgmmaRegA, ImmTransBReadsBMnMajor) {
  for (bool b : {true, false}) {
    make(128, b, /*trans_b=*/true);
    LoadedModule& m = dev.load(header() + kernel("k", one_mma(*this)));
    std::vector<float> d;
    LaunchResult r = launch(m, "k", 1, 1, &d);
    ASSERT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(r.reports.empty()) << all(r);
    expect_d(d, [&](int mm, int j) { return C[mm * n + j] + product(A1, mm, j); }, b ? "bf16 trans-b" : "f16 trans-b");
  }
}

// Two A fragments in a row accumulate into the same registers with no fence between them
// (accumulator accesses across wgmma.mma_async of the same shape are ordered by default).
TEST_F(WgmmaRegA, TwoChainedMmasAccumulateWithoutAFenceBetween) {
  make(64, false);
  const std::string middle = "  wgmma.fence.sync.aligned;\n" + mma(a1(), "%p1") + mma(a2(), "%p3") +
                             "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n";
  LoadedModule& m = dev.load(header() + kernel("k", middle));
  std::vector<float> d;
  LaunchResult r = launch(m, "k", 0, 1, &d);
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_TRUE(r.reports.empty()) << all(r);
  expect_d(d, [&](int mm, int j) { return product(A1, mm, j) + product(A2, mm, j); }, "A1 x B then + A2 x B");
}

// ---- wgmma.fence and the A fragment ---------------------------------------------------------

struct WgmmaRegAFence : WgmmaRegA {
  LoadedModule* m = nullptr;
  void SetUp() override {
    make(64, true);
    // A register written after wgmma.fence, then the mma: undefined (must be reported). Its
    // twin writes the register before the fence. The write is `xor.b32 %r11, %r11, 0`, which
    // changes no bit: the rule is about the access, not the value.
    const std::string tail = mma(a1(), "%p1") + "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n";
    const std::string write = "  xor.b32 %r11, %r11, 0;\n";
    // Online softmax's rescale: mma #1 (D = A1 x B), wait for it, multiply the accumulators by a
    // scale (0.5), wgmma.fence, mma #2 accumulating (D = 0.5 A1 x B + A2 x B). The faulty twin
    // leaves out the fence between the multiplies and mma #2.
    std::string rescale;
    for (int r = 0; r < n / 2; ++r) rescale += "  mul.f32 %f" + std::to_string(r) + ", %f" + std::to_string(r) + ", 0f3F000000;\n";
    const std::string first = "  wgmma.fence.sync.aligned;\n" + mma(a1(), "%p2") +
                              "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n" + rescale;
    const std::string second = mma(a2(), "%p3") + "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n";
    m = &dev.load(header() + kernel("a_written_after_fence", "  wgmma.fence.sync.aligned;\n" + write + tail) +
                  kernel("a_written_before_fence", write + "  wgmma.fence.sync.aligned;\n" + tail) +
                  kernel("rescale_fenced", first + "  wgmma.fence.sync.aligned;\n" + second) +
                  kernel("rescale_unfenced", first + second));
  }
  static bool fence_report(const LaunchResult& r) { return emu_test::has(r, ReportKind::WgmmaFence); }
};

TEST_F(WgmmaRegAFence, AFragmentWrittenAfterTheFenceIsReportedUnderEverySchedule) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch(*m, "a_written_after_fence", 1, s, nullptr, true); }, fence_report, &example),
            kSeeds)
      << example;
  LaunchResult r = launch(*m, "a_written_after_fence", 1, 1);
  ASSERT_TRUE(fence_report(r)) << all(r);
  EXPECT_NE(all(r).find("%r11 (A fragment)"), std::string::npos) << all(r);
}

TEST_F(WgmmaRegAFence, AFragmentWrittenBeforeTheFenceIsCleanUnderEverySchedule) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch(*m, "a_written_before_fence", 1, s, nullptr, true); }, clean, &example), kSeeds)
      << example;
  std::vector<float> d;
  ASSERT_TRUE(clean(launch(*m, "a_written_before_fence", 1, 1, &d)));
  expect_d(d, [&](int mm, int j) { return C[mm * n + j] + product(A1, mm, j); }, "fenced");
}

TEST_F(WgmmaRegAFence, SoftmaxRescaleWithTheFenceIsCleanAndComputesTheRescaledSum) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch(*m, "rescale_fenced", 1, s, nullptr, true); }, clean, &example), kSeeds)
      << example;
  std::vector<float> d;
  LaunchResult r = launch(*m, "rescale_fenced", 1, 1, &d);
  ASSERT_TRUE(clean(r)) << all(r);
  expect_d(d, [&](int mm, int j) { return 0.5 * product(A1, mm, j) + product(A2, mm, j); }, "0.5 A1 x B + A2 x B");
}

TEST_F(WgmmaRegAFence, SoftmaxRescaleWithoutTheFenceIsReportedUnderEverySchedule) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return launch(*m, "rescale_unfenced", 1, s, nullptr, true); }, fence_report, &example), kSeeds)
      << example;
  LaunchResult r = launch(*m, "rescale_unfenced", 1, 1);
  EXPECT_NE(all(r).find("(accumulator) was read or written by another instruction"), std::string::npos) << all(r);
}

}  // namespace
}  // namespace mgpu::emu
