// tcgen05.mma with A in tensor memory ([a-tmem]) on the virtual device: a hand-written sm_100a
// kernel places A with tcgen05.st .32x32b (PTX ISA 9.7.16.2.3.1.1: thread t of warp w stores
// lane 32 * (w % 4) + t, register r column base + r), the MMAs read it, and the result is
// checked against a double-precision reference computed here from the inputs -- never by running
// the device. The layout the test relies on (PTX ISA 9.7.16.10.5, cross-checked in CUTLASS's
// SM100_MMA_F16BF16_TS and Mosaic GPU's tcgen05.mma): row m of A in lane m, K elements k and
// k + 1 (k even) packed low/high into one 32-bit column, k / 2 columns from A's address.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"
#include "core/half.h"

namespace mgpu::emu {
namespace {

using emu_test::regs;
using emu_test::has;
using emu_test::all;

// One CTA of 128 threads computes D (128 x 64, f32) = A (128 x 64, bf16) x B^T (B: 64 x 64, bf16,
// K-major, 128-byte-swizzled in shared memory) with four tcgen05.mma m128n64k16 whose A is in
// tensor memory. Allocation: 128 columns; D in columns [0, 64), A in [64, 96) (64 bf16 per row =
// 32 columns; the MMA for k16 step kk reads columns 64 + 8 kk .. + 8). Thread t holds row t of A:
// it loads its 128 bytes from global memory as 32 words -- word r is (A[t][2r] low, A[t][2r+1]
// high), little-endian -- and stores them with tcgen05.st.32x32b.x32 at its warp's lanes, column
// 64. `mode`: 1 A's first 8 columns overwritten by tcgen05.st before the commit's barrier was
// waited for, 2 the MMAs read A from columns [320, 352), which the CTA never allocated, 3 a fifth
// MMA writes D over A's columns while the first four may still read them.
std::string a_tmem_kernel() {
  std::string loads, stores;
  for (int i = 0; i < 8; ++i)
    loads += "  ld.global.v4.b32 {%r" + std::to_string(100 + 4 * i) + ", %r" + std::to_string(101 + 4 * i) + ", %r" +
             std::to_string(102 + 4 * i) + ", %r" + std::to_string(103 + 4 * i) + "}, [%rd5+" + std::to_string(16 * i) + "];\n";
  for (int i = 0; i < 16; ++i)
    stores += "  st.global.v4.b32 [%rd31+" + std::to_string(16 * i) + "], {%r" + std::to_string(100 + 4 * i) + ", %r" +
              std::to_string(101 + 4 * i) + ", %r" + std::to_string(102 + 4 * i) + ", %r" + std::to_string(103 + 4 * i) + "};\n";
  std::string mmas;
  for (int kk = 0; kk < 4; ++kk)
    mmas += "  tcgen05.mma.cta_group::1.kind::f16 [%r30], [%r33], %rd24, %r32, %p8;\n"
            "  add.u32 %r33, %r33, 8;\n  add.s64 %rd24, %rd24, 2;\n  mov.pred %p8, 1;\n";
  return std::string(
             ".version 8.7\n.target sm_100a\n.address_size 64\n"
             ".extern .shared .align 1024 .b8 smem[];\n"
             ".visible .entry tc_a_tmem(.param .u64 pa, .param .u64 pb, .param .u64 pd, .param .u32 mode)\n{\n"
             "  .reg .pred %p<16>;\n  .reg .b16 %h<4>;\n  .reg .b32 %r<200>;\n  .reg .b64 %rd<40>;\n"
             "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n  ld.param.u64 %rd3, [pd];\n  ld.param.u32 %r1, [mode];\n"
             "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, smem;\n  shr.u32 %r21, %r2, 5;\n"
             // B (64 x 64) into shared memory at 0, 128-byte swizzled K-major: element (row, k) at
             // row * 128 + 2k with bits [4,7) XORed by bits [7,10). Threads 0-63 copy a row each.
             "  setp.lt.u32 %p1, %r2, 64;\n  @!%p1 bra LB_done;\n  mov.u32 %r10, 0;\n"
             "LB:\n  mad.lo.u32 %r11, %r2, 64, %r10;\n  mul.wide.u32 %rd10, %r11, 2;\n  add.s64 %rd11, %rd2, %rd10;\n"
             "  ld.global.b16 %h1, [%rd11];\n"
             "  shl.b32 %r12, %r2, 7;\n  shl.b32 %r13, %r10, 1;\n  add.u32 %r14, %r12, %r13;\n"
             "  shr.u32 %r15, %r14, 3;\n  and.b32 %r15, %r15, 112;\n  xor.b32 %r16, %r14, %r15;\n"
             "  add.u32 %r17, %r3, %r16;\n  st.shared.b16 [%r17], %h1;\n"
             "  add.u32 %r10, %r10, 1;\n  setp.lt.u32 %p1, %r10, 64;\n  @%p1 bra LB;\n"
             "LB_done:\n  fence.proxy.async.shared::cta;\n"
             // The mbarrier at 8192, the tensor memory address at 8200.
             "  setp.eq.u32 %p3, %r2, 0;\n  add.u32 %r20, %r3, 8192;\n  add.u32 %r22, %r3, 8200;\n"
             "  @%p3 mbarrier.init.shared.b64 [%r20], 1;\n"
             "  setp.eq.u32 %p4, %r21, 0;\n"
             "  @%p4 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r22], 128;\n"
             "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
             "  ld.shared.b32 %r30, [%r22];\n"
             // Row t of A into lane t, columns [64, 96).
             "  mul.wide.u32 %rd4, %r2, 128;\n  add.s64 %rd5, %rd1, %rd4;\n") +
         loads +
         "  shl.b32 %r40, %r21, 21;\n  add.u32 %r41, %r30, %r40;\n  add.u32 %r42, %r41, 64;\n"
         "  tcgen05.st.sync.aligned.32x32b.x32.b32 [%r42], " + regs(32, 100) + ";\n"
         "  tcgen05.wait::st.sync.aligned;\n"
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  @!%p3 bra WAIT;\n"
         // B's descriptor: start >> 4 | LBO 16 >> 4 << 16 | SBO 1024 >> 4 << 32 | 0b001 << 46 | 128B (2) << 61.
         "  cvt.u64.u32 %rd23, %r3;\n  shr.u64 %rd23, %rd23, 4;\n  and.b64 %rd23, %rd23, 16383;\n"
         "  or.b64 %rd24, %rd23, 0x4000404000010000;\n"
         // Instruction descriptor: F32 D (1 << 4), BF16 A/B (1 << 7, 1 << 10), N 64 >> 3 << 17, M 128 >> 4 << 24.
         "  mov.u32 %r32, 0x08100490;\n  mov.pred %p8, 0;\n"
         "  add.u32 %r33, %r30, 64;\n  setp.eq.u32 %p9, %r1, 2;\n  @%p9 add.u32 %r33, %r33, 256;\n" +
         mmas +
         "  setp.eq.u32 %p10, %r1, 3;\n  add.u32 %r34, %r30, 64;\n  or.b64 %rd25, %rd23, 0x4000404000010000;\n"
         "  @%p10 tcgen05.mma.cta_group::1.kind::f16 [%r34], [%r33], %rd25, %r32, %p8;\n"
         "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r20];\n"
         "WAIT:\n  setp.eq.u32 %p11, %r1, 1;\n  @!%p11 bra LW;\n"
         "  mov.u32 %r50, 0;\n"
         "  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r42], {%r50, %r50, %r50, %r50, %r50, %r50, %r50, %r50};\n"
         "  tcgen05.wait::st.sync.aligned;\n"
         "LW:\n  mbarrier.try_wait.parity.shared.b64 %p12, [%r20], 0;\n  @!%p12 bra LW;\n"
         "  tcgen05.fence::after_thread_sync;\n"
         "  tcgen05.ld.sync.aligned.32x32b.x64.b32 " + regs(64, 100) + ", [%r41];\n"
         "  tcgen05.wait::ld.sync.aligned;\n"
         "  mul.wide.u32 %rd30, %r2, 256;\n  add.s64 %rd31, %rd3, %rd30;\n" +
         stores +
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  @%p4 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r30, 128;\n"
         "  @%p4 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
         "  ret;\n}\n";
}

struct Tcgen05ATmem : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::vector<std::uint16_t> a, b;
  std::uint64_t da = 0, db = 0, dd = 0;
  void SetUp() override {
    m = &dev.load(a_tmem_kernel());
    a.resize(128 * 64);
    b.resize(64 * 64);
    // Every element distinct in its row, so a k paired with the wrong column or half shows.
    for (int i = 0; i < 128 * 64; ++i) a[i] = core::to_bf16(float((i * 7) % 13) - 6.0f + float(i % 64) * 0.125f);
    for (int i = 0; i < 64 * 64; ++i) b[i] = core::to_bf16(float((i * 5) % 11) * 0.25f - 1.0f);
    da = dev.memory().alloc(a.size() * 2);
    db = dev.memory().alloc(b.size() * 2);
    dd = dev.memory().alloc(128 * 64 * 4);
    std::memcpy(dev.memory().find(da, a.size() * 2), a.data(), a.size() * 2);
    std::memcpy(dev.memory().find(db, b.size() * 2), b.data(), b.size() * 2);
  }
  LaunchResult run(int mode, std::uint64_t seed = 1) {
    LaunchConfig c;
    c.block[0] = 128;
    c.dynamic_smem = 8208;
    c.seed = seed;
    c.detect_races = true;
    std::uint32_t md = static_cast<std::uint32_t>(mode);
    void* args[] = {&da, &db, &dd, &md};
    return dev.launch(*m, "tc_a_tmem", c, args);
  }
  // Largest |D - A x B^T| relative to the reference's magnitude, the reference in double.
  double max_error() {
    std::vector<float> d(128 * 64);
    std::memcpy(d.data(), dev.memory().find(dd, d.size() * 4), d.size() * 4);
    double worst = 0;
    for (int i = 0; i < 128; ++i)
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        for (int k = 0; k < 64; ++k) ref += double(core::from_bf16(a[i * 64 + k])) * core::from_bf16(b[j * 64 + k]);
        double e = std::fabs(d[i * 64 + j] - ref) / std::max(1.0, std::fabs(ref));
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      }
    return worst;
  }
};

TEST_F(Tcgen05ATmem, MmaReadingAFromTensorMemoryMatchesTheReferenceUnderEverySchedule) {  // race detection on
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r = run(0, seed);
    ASSERT_TRUE(r.ok) << "seed " << seed << "\n" << all(r);
    EXPECT_TRUE(r.reports.empty()) << "seed " << seed << "\n" << all(r);
    // Exact in f32: A's elements are multiples of 1/8 below 16, B's of 1/4 below 2, so every
    // partial sum is a multiple of 1/32 below 2^11 (16 significant bits).
    EXPECT_EQ(max_error(), 0.0) << "seed " << seed;
  }
}

TEST_F(Tcgen05ATmem, AOverwrittenByTcgen05StBeforeTheCommitsBarrierIsAHazard) {
  // Seeds divisible by 4 perform the MMA at the latest legal moment: after the store.
  LaunchResult r = run(1, 4);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::TmemHazard)) << all(r);
  EXPECT_NE(all(r).find("columns [64, 72) that the tcgen05.mma issued at PTX line"), std::string::npos) << all(r);
  EXPECT_NE(all(r).find("tcgen05.st writes tensor memory lanes"), std::string::npos) << all(r);
  EXPECT_NE(all(r).find("still reads as its A operand"), std::string::npos) << all(r);
  EXPECT_GT(max_error(), 0.01);  // the first k16 step read the zeros the warps stored
}

TEST_F(Tcgen05ATmem, AColumnsTheCtaDidNotAllocateAreReported) {
  LaunchResult r = run(2);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::TmemMisuse)) << all(r);
  EXPECT_NE(all(r).find("tcgen05.mma reads A at tensor memory lanes [0, 128) columns [320, 328) of CTA (0,0,0), not all allocated by it"),
            std::string::npos)
      << all(r);
}

TEST_F(Tcgen05ATmem, AnMmaWritingDOverAnotherMmasAInFlightIsAHazard) {
  LaunchResult r = run(3);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::TmemHazard)) << all(r);
  EXPECT_NE(all(r).find("tcgen05.mma writes D in tensor memory of CTA (0,0,0) where the tcgen05.mma issued at PTX line"),
            std::string::npos)
      << all(r);
  EXPECT_NE(all(r).find("still reads its A operand"), std::string::npos) << all(r);
}

}  // namespace
}  // namespace mgpu::emu
