// tcgen05 on the virtual device: hand-written sm_100a kernels, the correct one under several
// schedules and the faulty variants each checker must catch. Expected values come from the
// PTX ISA text (tcgen05.mma: D = A x B^T + D over f32, rows in tensor memory lanes, columns in
// tensor memory columns; tcgen05.ld .32x32b: thread t reads lane base + t, register r column
// base + r), computed here in double precision from the inputs, never by running the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"
#include "core/emu/engines/tensor_map.h"
#include "core/half.h"

namespace mgpu::emu {
namespace {

using emu_test::regs;
using emu_test::has;
using emu_test::all;

// One CTA of 128 threads computes D (128 x 64, f32) = A (128 x 64, bf16, K-major) x B^T
// (B: 64 x 64, bf16, K-major) with four tcgen05.mma m128n64k16 over 128-byte-swizzled shared
// memory, then each warp reads its 32 lanes with tcgen05.ld.32x32b.x64. `mode` selects a fault:
// 1 no commit, 2 no wait for the commit's barrier, 3 a loaded register used before wait::ld,
// 4 no dealloc, 5 shared memory overwritten while the MMAs read it, 6 a second warp asks for
// all 512 columns while the first holds 64 and waits for it at a barrier, 7 a commit on the
// wrong barrier (the consumer's barrier never completes), 8 no fence.proxy.async between the
// threads' shared-memory stores and the MMA that reads them.
std::string mma_kernel() {
  std::string stores;
  for (int i = 0; i < 16; ++i)
    stores += "  st.global.v4.b32 [%rd31+" + std::to_string(16 * i) + "], {%r" + std::to_string(100 + 4 * i) + ", %r" +
              std::to_string(101 + 4 * i) + ", %r" + std::to_string(102 + 4 * i) + ", %r" + std::to_string(103 + 4 * i) + "};\n";
  // Shared memory: A at 0 (16 KiB), B at 16384 (8 KiB), the mbarrier at 24576, a second one
  // at 24592, the tensor memory address at 24584. Element (row, k) of a 128-byte-swizzled
  // K-major tile lives at row * 128 + 2k with bits [4,7) XORed by bits [7,10).
  auto copy = [](const char* label, const char* src, int base, int rows) {
    std::string l(label);
    return "  setp.lt.u32 %p1, %r2, " + std::to_string(rows) + ";\n  @!%p1 bra " + l + "_done;\n  mov.u32 %r10, 0;\n" + l + ":\n" +
           "  mad.lo.u32 %r11, %r2, 64, %r10;\n  mul.wide.u32 %rd10, %r11, 2;\n  add.s64 %rd11, " + src +
           ", %rd10;\n  ld.global.b16 %h1, [%rd11];\n"
           "  shl.b32 %r12, %r2, 7;\n  shl.b32 %r13, %r10, 1;\n  add.u32 %r14, %r12, %r13;\n"
           "  shr.u32 %r15, %r14, 3;\n  and.b32 %r15, %r15, 112;\n  xor.b32 %r16, %r14, %r15;\n  add.u32 %r16, %r16, " +
           std::to_string(base) + ";\n  add.u32 %r17, %r3, %r16;\n  st.shared.b16 [%r17], %h1;\n"
           "  add.u32 %r10, %r10, 1;\n  setp.lt.u32 %p1, %r10, 64;\n  @%p1 bra " + l + ";\n" + l + "_done:\n";
  };
  std::string mmas;
  for (int kk = 0; kk < 4; ++kk) {
    mmas += "  tcgen05.mma.cta_group::1.kind::f16 [%r30], %rd22, %rd24, %r32, %p8;\n"
            "  add.s64 %rd22, %rd22, 2;\n  add.s64 %rd24, %rd24, 2;\n  mov.pred %p8, 1;\n";
  }
  return std::string(
             ".version 8.7\n.target sm_100a\n.address_size 64\n"
             ".extern .shared .align 1024 .b8 smem[];\n"
             ".visible .entry tc_mma(.param .u64 pa, .param .u64 pb, .param .u64 pd, .param .u32 mode)\n{\n"
             "  .reg .pred %p<16>;\n  .reg .b16 %h<4>;\n  .reg .b32 %r<200>;\n  .reg .b64 %rd<40>;\n"
             "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n  ld.param.u64 %rd3, [pd];\n  ld.param.u32 %r1, [mode];\n"
             "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, smem;\n  shr.u32 %r21, %r2, 5;\n") +
         copy("LA", "%rd1", 0, 128) + copy("LB", "%rd2", 16384, 64) +
         "  setp.eq.u32 %p2, %r1, 8;\n  @!%p2 fence.proxy.async.shared::cta;\n"
         "  setp.eq.u32 %p3, %r2, 0;\n  add.u32 %r20, %r3, 24576;\n  add.u32 %r23, %r3, 24592;\n"
         "  @%p3 mbarrier.init.shared.b64 [%r20], 1;\n  @%p3 mbarrier.init.shared.b64 [%r23], 1;\n"
         "  setp.eq.u32 %p4, %r21, 0;\n  add.u32 %r22, %r3, 24584;\n"
         "  @%p4 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r22], 64;\n"
         "  setp.eq.u32 %p5, %r21, 1;\n  setp.eq.u32 %p6, %r1, 6;\n  and.pred %p7, %p5, %p6;\n"
         "  @%p7 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r22], 512;\n"
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  ld.shared.b32 %r30, [%r22];\n"
         "  @!%p3 bra WAIT;\n"
         // Descriptors: start >> 4 | LBO 16 >> 4 << 16 | SBO 1024 >> 4 << 32 | 0b001 << 46 | 128B (2) << 61.
         "  cvt.u64.u32 %rd21, %r3;\n  shr.u64 %rd21, %rd21, 4;\n  and.b64 %rd21, %rd21, 16383;\n  or.b64 %rd22, %rd21, 0x4000404000010000;\n"
         "  add.u32 %r31, %r3, 16384;\n  cvt.u64.u32 %rd23, %r31;\n  shr.u64 %rd23, %rd23, 4;\n  and.b64 %rd23, %rd23, 16383;\n"
         "  or.b64 %rd24, %rd23, 0x4000404000010000;\n"
         // Instruction descriptor: F32 D (1 << 4), BF16 A/B (1 << 7, 1 << 10), N 64 >> 3 << 17, M 128 >> 4 << 24.
         "  mov.u32 %r32, 0x08100490;\n  mov.pred %p8, 0;\n" +
         mmas +
         "  setp.eq.u32 %p9, %r1, 5;\n  @%p9 st.shared.b32 [%r3+256], 0;\n"
         "  setp.eq.u32 %p10, %r1, 1;\n  @%p10 bra WAIT;\n"
         "  setp.eq.u32 %p10, %r1, 7;\n  @%p10 bra WRONG;\n"
         "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r20];\n  bra WAIT;\n"
         "WRONG:\n  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r23];\n"
         "WAIT:\n  setp.eq.u32 %p11, %r1, 2;\n  @%p11 bra READ;\n"
         "LW:\n  mbarrier.try_wait.parity.shared.b64 %p12, [%r20], 0;\n  @!%p12 bra LW;\n"
         "READ:\n  tcgen05.fence::after_thread_sync;\n"
         "  shl.b32 %r40, %r21, 21;\n  add.u32 %r41, %r30, %r40;\n"
         "  tcgen05.ld.sync.aligned.32x32b.x64.b32 " + regs(64) + ", [%r41];\n"
         "  setp.eq.u32 %p13, %r1, 3;\n  @%p13 st.global.b32 [%rd3], %r100;\n"
         "  tcgen05.wait::ld.sync.aligned;\n"
         "  mul.wide.u32 %rd30, %r2, 256;\n  add.s64 %rd31, %rd3, %rd30;\n" +
         stores +
         "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n"
         "  setp.eq.u32 %p14, %r1, 4;\n  @%p14 bra END;\n"
         "  @%p4 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r30, 64;\n"
         "  @%p4 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
         "END:\n  ret;\n}\n";
}

struct Tcgen05 : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::vector<std::uint16_t> a, b;
  std::uint64_t da = 0, db = 0, dd = 0;
  void SetUp() override {
    m = &dev.load(mma_kernel());
    a.resize(128 * 64);
    b.resize(64 * 64);
    for (int i = 0; i < 128 * 64; ++i) a[i] = core::to_bf16(float((i * 7) % 13) - 6.0f);
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
    c.dynamic_smem = 25600;
    c.seed = seed;
    c.detect_races = mode == 0;
    std::uint32_t md = static_cast<std::uint32_t>(mode);
    void* args[] = {&da, &db, &dd, &md};
    return dev.launch(*m, "tc_mma", c, args);
  }
  double max_error() {
    std::vector<float> d(128 * 64);
    std::memcpy(d.data(), dev.memory().find(dd, d.size() * 4), d.size() * 4);
    double worst = 0;
    for (int i = 0; i < 128; ++i)
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        for (int k = 0; k < 64; ++k) ref += double(core::from_bf16(a[i * 64 + k])) * core::from_bf16(b[j * 64 + k]);
        double e = std::fabs(d[i * 64 + j] - ref);
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      }
    return worst;
  }
};

TEST_F(Tcgen05, MmaTileMatchesTheReferenceUnderEverySchedule) {  // race detection on
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r = run(0, seed);
    ASSERT_TRUE(r.ok) << "seed " << seed << "\n" << all(r);
    EXPECT_TRUE(r.reports.empty()) << "seed " << seed << "\n" << all(r);
    EXPECT_EQ(max_error(), 0.0) << "seed " << seed;  // small integers and quarters: exact in f32
  }
}

TEST_F(Tcgen05, MissingCommitDeadlocksNamingTheConsumersBarrier) {
  LaunchResult r = run(1);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("mbarrier at shared offset 24576"), std::string::npos) << all(r);
  EXPECT_NE(r.reports[0].message.find("tcgen05.mma operations no tcgen05.commit covers: 4"), std::string::npos) << all(r);
}

TEST_F(Tcgen05, CommitOnTheWrongBarrierDeadlocks) {
  LaunchResult r = run(7);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("shared offset 24576"), std::string::npos) << all(r);
}

TEST_F(Tcgen05, TensorMemoryReadBeforeTheMmasBarrierIsAHazard) {
  // Seeds divisible by 4 perform the MMA at the latest legal moment: after the reads.
  LaunchResult r = run(2, 4);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::TmemHazard)) << all(r);
  EXPECT_NE(all(r).find("tcgen05.ld reads tensor memory lanes"), std::string::npos) << all(r);
  EXPECT_GT(max_error(), 1.0);
}

TEST_F(Tcgen05, LoadedRegisterUsedBeforeWaitLdIsReported) {
  LaunchResult r = run(3);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::AccumulatorEarly)) << all(r);
  EXPECT_NE(all(r).find("no tcgen05.wait::ld has completed"), std::string::npos) << all(r);
}

TEST_F(Tcgen05, ColumnsStillAllocatedAtExitAreALeak) {
  LaunchResult r = run(4);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::TmemMisuse)) << all(r);
  EXPECT_NE(all(r).find("exited holding tensor memory columns [0, 64)"), std::string::npos) << all(r);
  EXPECT_EQ(max_error(), 0.0);
}

TEST_F(Tcgen05, SharedMemoryOverwrittenWhileTheMmaReadsItIsReported) {
  LaunchResult r = run(5);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::AsyncOverlap)) << all(r);
  EXPECT_NE(all(r).find("a tcgen05.mma still reading it"), std::string::npos) << all(r);
}

TEST_F(Tcgen05, OperandsStoredWithoutAProxyFenceAreReported) {
  LaunchResult r = run(8);
  ASSERT_TRUE(r.ok) << all(r);
  ASSERT_TRUE(has(r, ReportKind::ProxyFence)) << all(r);
  EXPECT_NE(all(r).find("tcgen05.mma reads shared offset"), std::string::npos) << all(r);
}

TEST_F(Tcgen05, AnAllocationThatCanNeverBeSatisfiedDeadlocksNamingIt) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaunchResult r = run(6, seed);
    ASSERT_FALSE(r.ok);
    EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
    EXPECT_NE(r.reports[0].message.find("in tcgen05.alloc for"), std::string::npos) << all(r);
    EXPECT_NE(r.reports[0].message.find("held by CTA (0,0,0) warp"), std::string::npos) << all(r);
  }
}


// A CTA pair (cluster of 2) computes D (256 x 64, f32) = A (256 x 64) x B^T (B: 64 x 64) with one
// tcgen05.mma.cta_group::2 per k16 step, as CUTLASS's 2-SM UMMA does: each CTA loads its 128
// rows of A and its 32 rows of B with .cta_group::2 TMA loads that complete on the even CTA's
// barrier (reached by clearing bit 24 of the shared address, CUTLASS's peer-bit mask); the even
// CTA's thread 0 issues the MMAs and commits with .multicast::cluster to both CTAs' barriers;
// each CTA reads its 128 rows from its own tensor memory. `mode`: 1 the odd CTA signals its own
// barrier (the leader waits forever for its bytes), 2 the odd CTA never allocates (the leader's
// collective tcgen05.alloc waits forever for its peer).
std::string pair_kernel() {
  std::string stores;
  for (int i = 0; i < 16; ++i)
    stores += "  st.global.v4.b32 [%rd31+" + std::to_string(16 * i) + "], {%r" + std::to_string(100 + 4 * i) + ", %r" +
              std::to_string(101 + 4 * i) + ", %r" + std::to_string(102 + 4 * i) + ", %r" + std::to_string(103 + 4 * i) + "};\n";
  std::string mmas;
  for (int kk = 0; kk < 4; ++kk)
    mmas += "  tcgen05.mma.cta_group::2.kind::f16 [%r30], %rd22, %rd24, %r32, %p8;\n"
            "  add.s64 %rd22, %rd22, 2;\n  add.s64 %rd24, %rd24, 2;\n  mov.pred %p8, 1;\n";
  return std::string(
             ".version 8.7\n.target sm_100a\n.address_size 64\n"
             ".extern .shared .align 1024 .b8 smem[];\n"
             ".visible .entry tc_pair(.param .align 64 .b8 ma[128], .param .align 64 .b8 mb[128], .param .u64 pd, .param .u32 mode)\n{\n"
             "  .reg .pred %p<16>;\n  .reg .b16 %rs<4>;\n  .reg .b32 %r<200>;\n  .reg .b64 %rd<40>;\n"
             "  mov.b64 %rd1, ma;\n  mov.b64 %rd2, mb;\n  cvta.param.u64 %rd1, %rd1;\n  cvta.param.u64 %rd2, %rd2;\n"
             "  ld.param.u64 %rd3, [pd];\n  ld.param.u32 %r1, [mode];\n"
             "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, smem;\n  shr.u32 %r21, %r2, 5;\n  mov.u32 %r4, %cluster_ctarank;\n"
             "  setp.eq.u32 %p3, %r2, 0;\n  setp.eq.u32 %p4, %r21, 0;\n  setp.eq.u32 %p5, %r4, 0;\n"
             "  add.u32 %r20, %r3, 24576;\n  add.u32 %r23, %r3, 24592;\n  add.u32 %r22, %r3, 24584;\n"
             "  @%p3 mbarrier.init.shared.b64 [%r20], 1;\n  @%p3 mbarrier.init.shared.b64 [%r23], 1;\n"
             "  fence.mbarrier_init.release.cluster;\n"
             // mode 2: the odd CTA never allocates.
             "  setp.eq.u32 %p6, %r1, 2;\n  @%p5 bra ALLOC;\n  @%p6 bra ALLOCATED;\n"
             "ALLOC:\n  @%p4 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r22], 64;\n"
             "  @%p4 tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n"
             "ALLOCATED:\n  tcgen05.fence::before_thread_sync;\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
             "  tcgen05.fence::after_thread_sync;\n  ld.shared.b32 %r30, [%r22];\n"
             "  and.pred %p7, %p3, %p5;\n"
             "  @%p7 mbarrier.arrive.expect_tx.shared.b64 _, [%r20], 40960;\n"
             "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
             "  @!%p3 bra WAIT;\n"
             // The leader's barrier: clear the peer bit (bit 24) of this CTA's address; mode 1 keeps it.
             "  and.b32 %r24, %r20, 0xFEFFFFFF;\n  setp.eq.u32 %p9, %r1, 1;\n  selp.b32 %r24, %r20, %r24, %p9;\n"
             "  shl.b32 %r25, %r4, 7;\n  mov.u32 %r26, 0;\n  shl.b32 %r27, %r4, 5;\n  add.u32 %r28, %r3, 16384;\n"
             "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [%r3], [%rd1, {%r26, %r25}], [%r24];\n"
             "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [%r28], [%rd2, {%r26, %r27}], [%r24];\n"
             "  @!%p5 bra WAIT;\n"
             "LF:\n  mbarrier.try_wait.parity.shared.b64 %p12, [%r20], 0;\n  @!%p12 bra LF;\n"
             "  tcgen05.fence::after_thread_sync;\n"
             "  cvt.u64.u32 %rd21, %r3;\n  shr.u64 %rd21, %rd21, 4;\n  and.b64 %rd21, %rd21, 16383;\n  or.b64 %rd22, %rd21, 0x4000404000010000;\n"
             "  cvt.u64.u32 %rd23, %r28;\n  shr.u64 %rd23, %rd23, 4;\n  and.b64 %rd23, %rd23, 16383;\n  or.b64 %rd24, %rd23, 0x4000404000010000;\n"
             // F32 D, BF16 A/B, N 64 >> 3 << 17, M 256 >> 4 << 24.
             "  mov.u32 %r32, 0x10100490;\n  mov.pred %p8, 0;\n") +
         mmas +
         "  mov.b16 %rs1, 3;\n"
         "  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r23], %rs1;\n"
         "WAIT:\n"
         "LW:\n  mbarrier.try_wait.parity.shared.b64 %p12, [%r23], 0;\n  @!%p12 bra LW;\n"
         "  tcgen05.fence::after_thread_sync;\n"
         "  shl.b32 %r40, %r21, 21;\n  add.u32 %r41, %r30, %r40;\n"
         "  tcgen05.ld.sync.aligned.32x32b.x64.b32 " + regs(64) + ", [%r41];\n"
         "  tcgen05.wait::ld.sync.aligned;\n"
         "  shl.b32 %r42, %r4, 7;\n  add.u32 %r43, %r42, %r2;\n"
         "  mul.wide.u32 %rd30, %r43, 256;\n  add.s64 %rd31, %rd3, %rd30;\n" +
         stores +
         "  tcgen05.fence::before_thread_sync;\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
         "  tcgen05.fence::after_thread_sync;\n"
         "  @%p4 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r30, 64;\n"
         "  ret;\n}\n";
}

struct Tcgen05Pair : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::vector<std::uint16_t> a, b;
  std::uint64_t da = 0, db = 0, dd = 0;
  alignas(64) std::uint8_t map_a[128], map_b[128];
  void SetUp() override {
    m = &dev.load(pair_kernel());
    a.resize(256 * 64);
    b.resize(64 * 64);
    for (int i = 0; i < 256 * 64; ++i) a[i] = core::to_bf16(float((i * 7) % 13) - 6.0f);
    for (int i = 0; i < 64 * 64; ++i) b[i] = core::to_bf16(float((i * 5) % 11) * 0.25f - 1.0f);
    da = dev.memory().alloc(a.size() * 2);
    db = dev.memory().alloc(b.size() * 2);
    dd = dev.memory().alloc(256 * 64 * 4);
    std::memcpy(dev.memory().find(da, a.size() * 2), a.data(), a.size() * 2);
    std::memcpy(dev.memory().find(db, b.size() * 2), b.data(), b.size() * 2);
    std::uint64_t dims_a[2] = {64, 256}, dims_b[2] = {64, 64}, strides[1] = {128};
    std::uint32_t box_a[2] = {64, 128}, box_b[2] = {64, 32}, es[2] = {1, 1};
    ASSERT_EQ(encode_tensor_map(map_a, 9 /*BFLOAT16*/, 2, da, dims_a, strides, box_a, es, 0, 3 /*128B*/, 0), "");
    ASSERT_EQ(encode_tensor_map(map_b, 9, 2, db, dims_b, strides, box_b, es, 0, 3, 0), "");
  }
  LaunchResult run(int mode, std::uint64_t seed = 1) {
    LaunchConfig c;
    c.block[0] = 128;
    c.grid[0] = 2;
    c.cluster[0] = 2;
    c.dynamic_smem = 25600;
    c.seed = seed;
    c.detect_races = mode == 0;
    std::uint32_t md = static_cast<std::uint32_t>(mode);
    void* args[] = {map_a, map_b, &dd, &md};
    return dev.launch(*m, "tc_pair", c, args);
  }
  double max_error() {
    std::vector<float> d(256 * 64);
    std::memcpy(d.data(), dev.memory().find(dd, d.size() * 4), d.size() * 4);
    double worst = 0;
    for (int i = 0; i < 256; ++i)
      for (int j = 0; j < 64; ++j) {
        double ref = 0;
        for (int k = 0; k < 64; ++k) ref += double(core::from_bf16(a[i * 64 + k])) * core::from_bf16(b[j * 64 + k]);
        double e = std::fabs(d[i * 64 + j] - ref);
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      }
    return worst;
  }
};

TEST_F(Tcgen05Pair, TwoCtaMmaMatchesTheReferenceUnderEverySchedule) {  // race detection on
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r = run(0, seed);
    ASSERT_TRUE(r.ok) << "seed " << seed << "\n" << all(r);
    EXPECT_TRUE(r.reports.empty()) << "seed " << seed << "\n" << all(r);
    EXPECT_EQ(max_error(), 0.0) << "seed " << seed;
  }
}

TEST_F(Tcgen05Pair, LoadSignallingTheOddCtasOwnBarrierLeavesTheLeaderWaiting) {
  LaunchResult r = run(1);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("tx-count 20480 bytes"), std::string::npos) << all(r);
}

TEST_F(Tcgen05Pair, PairAllocationWithoutThePeerDeadlocksNamingIt) {
  LaunchResult r = run(2);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
  EXPECT_NE(r.reports[0].message.find("for a warp of the peer CTA rank 1 to perform it too"), std::string::npos) << all(r);
}


// Residency: two 2-CTA clusters whose CTAs fit on the same SMs together (a warp each, little
// shared memory) run together, CTA rank r of each cluster on SM r, sharing its tensor memory.
// Each CTA's warp allocates `cols` columns and then waits at barrier.cluster for its peer. Were
// the columns free for all, one cluster could get SM 0's and the other SM 1's, each waiting for a
// peer that waits for columns the other holds. The allocation permit rules that out
// (engines/tmem.h; tests/emu/test_emu_tmem_permit.cc): a cluster takes the permits of both SMs
// together and keeps them until its CTAs relinquish them (here after freeing their columns), so
// the clusters take turns.
const char* kCrossKernel =
    ".version 8.7\n.target sm_100a\n.address_size 64\n"
    ".visible .entry tc_cross(.param .u32 cols)\n{\n"
    "  .shared .align 16 .b8 slot[16];\n  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n"
    "  ld.param.u32 %r1, [cols];\n"
    "  mov.u32 %r4, slot;\n"
    "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], %r1;\n"
    "  tcgen05.fence::before_thread_sync;\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
    "  tcgen05.fence::after_thread_sync;\n"
    "  ld.shared.b32 %r5, [%r4];\n"
    "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r5, %r1;\n"
    "  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
    "  ret;\n}\n";

struct Tcgen05Residency : ::testing::Test {
  Device dev;
  LaunchResult run(std::uint32_t cols, std::uint32_t dynamic_smem, std::uint64_t seed) {
    LoadedModule& m = dev.load(kCrossKernel);
    LaunchConfig c;
    c.block[0] = 32;
    c.grid[0] = 4;
    c.cluster[0] = 2;
    c.dynamic_smem = dynamic_smem;
    c.seed = seed;
    void* args[] = {&cols};
    return dev.launch(m, "tc_cross", c, args);
  }
};

TEST_F(Tcgen05Residency, CoResidentClustersTakeTurnsWithTheAllocationPermit) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    LaunchResult r = run(512, 0, seed);
    EXPECT_TRUE(r.ok && r.reports.empty()) << "seed " << seed << "\n" << all(r);
  }
}

TEST_F(Tcgen05Residency, ColumnsForEveryResidentCtaNeverBlockForever) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    LaunchResult r = run(256, 0, seed);
    EXPECT_TRUE(r.ok && r.reports.empty()) << "seed " << seed << "\n" << all(r);
  }
}

TEST_F(Tcgen05Residency, CtasThatCannotShareAnSmDoNotCompete) {
  // 150000 bytes of shared memory each: one CTA per SM (228 KiB per SM, 1 KiB reserved per CTA).
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    LaunchResult r = run(512, 150000, seed);
    EXPECT_TRUE(r.ok && r.reports.empty()) << "seed " << seed << "\n" << all(r);
  }
}

}  // namespace
}  // namespace mgpu::emu
