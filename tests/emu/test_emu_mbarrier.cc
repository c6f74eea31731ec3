// Spec-derived tests for core/emu/engines/mbarrier: PTX ISA 9.7.13.15 "mbarrier" (sections
// .2 contents and valid ranges, .4 phase, .5 tx-count with expect-tx / complete-tx, .6 phase
// completion, .7 arrive-on, and test_wait/try_wait's phaseParity / state operands).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "core/emu/engines/mbarrier.h"
#include "core/emu/engines/tensor_map.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

// 9.7.13.15.2: expected count in [1, 2^20-1]; after init the current phase is 0 with all
// arrivals pending and tx-count 0. test_wait.parity: phaseParity names "the current phase or the
// immediately preceding phase" by parity; the preceding phase (parity 1 before anything
// completed) counts as complete, which is what lets a producer's first wait on an "empty"
// barrier with parity 1 pass (CUTLASS PipelineTmaAsync starts producers at phase 1).
TEST(EmuMBarrier, InitState) {
  MBarrier b;
  EXPECT_FALSE(b.initialized());
  b.init(3);
  EXPECT_TRUE(b.initialized());
  EXPECT_EQ(b.phase(), 0u);
  EXPECT_EQ(b.expected(), 3u);
  EXPECT_EQ(b.pending(), 3u);
  EXPECT_EQ(b.tx_count(), 0);
  EXPECT_FALSE(b.phase_complete_parity(0));
  EXPECT_TRUE(b.phase_complete_parity(1));
  b.invalidate();
  EXPECT_FALSE(b.initialized());
}

// 9.7.13.15.6: the phase completes when pending arrivals reach zero (and tx-count is zero); the
// next phase starts with pending reset to the expected count. Over several phases the parity
// alternates and wraps: parity p names phase n when n % 2 == p.
TEST(EmuMBarrier, PhaseArithmeticOverSeveralPhases) {
  MBarrier b;
  b.init(3);
  std::string err;
  for (std::uint64_t phase = 0; phase < 6; ++phase) {
    const std::uint32_t cur = static_cast<std::uint32_t>(phase & 1);
    EXPECT_EQ(b.phase(), phase);
    EXPECT_FALSE(b.phase_complete_parity(cur)) << "current phase " << phase << " not yet complete";
    EXPECT_TRUE(b.phase_complete_parity(cur ^ 1)) << "preceding phase is complete";
    EXPECT_EQ(b.arrive(1, err), phase);
    EXPECT_EQ(b.arrive(1, err), phase);
    EXPECT_EQ(b.pending(), 1u);
    EXPECT_EQ(b.phase(), phase);
    EXPECT_FALSE(b.phase_complete_parity(cur));
    EXPECT_EQ(b.arrive(1, err), phase) << "the completing arrival counts in the phase it completes";
    EXPECT_EQ(b.phase(), phase + 1);
    EXPECT_EQ(b.pending(), 3u);
    EXPECT_TRUE(b.phase_complete_parity(cur)) << "phase " << phase << " completed";
    EXPECT_FALSE(b.phase_complete_parity(cur ^ 1)) << "parity wraps to the new current phase";
  }
  EXPECT_EQ(b.completions(), 6u);
  EXPECT_EQ(err, "");
}

// 9.7.13.15.7: arrive-on with a count argument decrements pending by count.
TEST(EmuMBarrier, ArriveWithCount) {
  MBarrier b;
  b.init(128);
  std::string err;
  b.arrive(100, err);
  EXPECT_EQ(b.pending(), 28u);
  b.arrive(27, err);
  EXPECT_EQ(b.phase(), 0u);
  b.arrive(1, err);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(b.pending(), 128u);
  b.arrive(128, err);
  EXPECT_EQ(b.phase(), 2u);
  EXPECT_EQ(err, "");
}

// mbarrier.arrive returns an opaque state; test_wait/try_wait with that state report whether
// the phase the arrival counted in has completed.
TEST(EmuMBarrier, ArriveTokens) {
  MBarrier b;
  b.init(2);
  std::string err;
  const std::uint64_t t0 = b.arrive(1, err);
  EXPECT_FALSE(b.phase_complete_token(t0));
  const std::uint64_t t0b = b.arrive(1, err);
  EXPECT_EQ(t0, t0b);
  EXPECT_TRUE(b.phase_complete_token(t0));
  const std::uint64_t t1 = b.arrive(1, err);
  EXPECT_NE(t1, t0);
  EXPECT_FALSE(b.phase_complete_token(t1));
  EXPECT_TRUE(b.phase_complete_token(t0)) << "an old phase stays complete";
  b.arrive(1, err);
  EXPECT_TRUE(b.phase_complete_token(t1));
  EXPECT_EQ(err, "");
}

// 9.7.13.15.5: expect-tx raises tx-count, complete-tx lowers it; the phase needs both zero
// pending arrivals and zero tx-count. Order 1: arrive.expect_tx (expect, then arrive), then the
// bytes land in pieces.
TEST(EmuMBarrier, ExpectTxThenCompleteTx) {
  MBarrier b;
  b.init(1);
  std::string err;
  for (std::uint64_t phase = 0; phase < 3; ++phase) {
    ASSERT_TRUE(b.expect_tx(4096, err));
    b.arrive(1, err);
    EXPECT_EQ(b.pending(), 0u);
    EXPECT_EQ(b.tx_count(), 4096);
    EXPECT_EQ(b.phase(), phase) << "arrivals alone do not complete a phase with bytes pending";
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(b.complete_tx(1024, err));
      EXPECT_EQ(b.phase(), phase);
    }
    EXPECT_EQ(b.tx_count(), 1024);
    ASSERT_TRUE(b.complete_tx(1024, err));
    EXPECT_EQ(b.phase(), phase + 1);
    EXPECT_EQ(b.tx_count(), 0);
    EXPECT_EQ(b.pending(), 1u);
    EXPECT_TRUE(b.phase_complete_parity(static_cast<std::uint32_t>(phase & 1)));
  }
  EXPECT_EQ(err, "");
}

// Order 2: the bytes land before the expect-tx that announces them (a TMA can finish before the
// producer's arrive.expect_tx is performed); tx-count goes negative, which its valid range
// [-(2^20-1), 2^20-1] allows, and the phase completes once expect and arrival come.
TEST(EmuMBarrier, CompleteTxBeforeExpectTx) {
  MBarrier b;
  b.init(1);
  std::string err;
  ASSERT_TRUE(b.complete_tx(4096, err));
  EXPECT_EQ(err, "");
  EXPECT_EQ(b.tx_count(), -4096);
  EXPECT_EQ(b.phase(), 0u);
  ASSERT_TRUE(b.expect_tx(4096, err));
  EXPECT_EQ(b.tx_count(), 0);
  EXPECT_EQ(b.phase(), 0u) << "tx-count zero but an arrival pending";
  b.arrive(1, err);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(err, "");

  // Half before, half after.
  ASSERT_TRUE(b.complete_tx(2048, err));
  ASSERT_TRUE(b.expect_tx(4096, err));
  b.arrive(1, err);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(b.tx_count(), 2048);
  ASSERT_TRUE(b.complete_tx(2048, err));
  EXPECT_EQ(b.phase(), 2u);
  EXPECT_EQ(err, "");
}

// Two producers each announcing their own bytes (count 2, two arrive.expect_tx).
TEST(EmuMBarrier, TwoProducersAccumulateTx) {
  MBarrier b;
  b.init(2);
  std::string err;
  b.expect_tx(1000, err);
  b.arrive(1, err);
  b.complete_tx(1000, err);
  EXPECT_EQ(b.phase(), 0u) << "second producer has not arrived";
  b.expect_tx(512, err);
  b.arrive(1, err);
  EXPECT_EQ(b.phase(), 0u);
  b.complete_tx(512, err);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(err, "");
}

// Too many bytes, after every arrival is in: nothing can balance the negative tx-count; misuse
// reported (issue 16: "tx-count going negative (more bytes than expected)").
TEST(EmuMBarrier, TooManyBytesIsAnError) {
  MBarrier b;
  b.init(1);
  std::string err;
  b.expect_tx(4096, err);
  b.arrive(1, err);
  EXPECT_FALSE(b.complete_tx(4112, err));
  EXPECT_EQ(err, "phase 0 received 16 more bytes than its expect_tx announced");

  // Bytes first, then an arrival that finds the count already overdrawn.
  MBarrier c;
  c.init(1);
  std::string err2;
  EXPECT_TRUE(c.complete_tx(8192, err2));
  c.expect_tx(4096, err2);
  c.arrive(1, err2);
  EXPECT_EQ(err2, "phase 0 received 4096 more bytes than its expect_tx announced (tx-count -4096)");
}

// Too few bytes: the phase never completes (a deadlock for the waiter, reported elsewhere).
TEST(EmuMBarrier, TooFewBytesDoNotComplete) {
  MBarrier b;
  b.init(1);
  std::string err;
  b.expect_tx(4096, err);
  b.arrive(1, err);
  EXPECT_TRUE(b.complete_tx(4080, err));
  EXPECT_EQ(err, "");
  EXPECT_EQ(b.phase(), 0u);
  EXPECT_EQ(b.tx_count(), 16);
  EXPECT_FALSE(b.phase_complete_parity(0));
}

// 9.7.13.15.2: pending arrival count has minimum 0; an arrive of more than is pending would take
// it below, which is misuse.
TEST(EmuMBarrier, ArrivalsBeyondTheCount) {
  MBarrier b;
  b.init(2);
  std::string err;
  b.arrive(3, err);
  EXPECT_EQ(err, "arrive of 3 with only 2 arrivals pending in phase 0 (expected count 2)");
  std::string err2;
  b.init(2);
  b.arrive(1, err2);
  b.arrive(2, err2);
  EXPECT_EQ(err2, "arrive of 2 with only 1 arrivals pending in phase 0 (expected count 2)");
  // An arrival after a completion is not "beyond the count": it counts toward the next phase.
  MBarrier c;
  c.init(1);
  std::string err3;
  EXPECT_EQ(c.arrive(1, err3), 0u);
  EXPECT_EQ(c.arrive(1, err3), 1u);
  EXPECT_EQ(c.phase(), 2u);
  EXPECT_EQ(err3, "");
}

// 9.7.13.15.2: tx-count valid range [-(2^20-1), 2^20-1], both ends.
TEST(EmuMBarrier, TxCountRange) {
  MBarrier b;
  b.init(1);
  std::string err;
  EXPECT_TRUE(b.expect_tx((1u << 20) - 1, err));
  EXPECT_EQ(err, "");
  EXPECT_FALSE(b.expect_tx(1, err));
  EXPECT_EQ(err, "tx-count 1048576 exceeds 2^20-1");

  MBarrier c;
  c.init(1);
  std::string err2;
  EXPECT_TRUE(c.complete_tx((1u << 20) - 1, err2));
  EXPECT_EQ(err2, "");
  EXPECT_FALSE(c.complete_tx(1, err2));
  EXPECT_EQ(err2, "tx-count -1048576 is below -(2^20-1)");
}

// 9.7.13.15.x mbarrier.arrive_drop: "decrements the expected arrival count ... for the current
// and all subsequent phases" besides arriving: a barrier of 3 where one thread drops out
// completes its next phases with 2 arrivals.
TEST(EmuMBarrier, ArriveDropLowersTheCountOfEveryLaterPhase) {
  MBarrier b;
  b.init(3);
  std::string err;
  b.arrive(1, err);
  b.arrive_drop(1, err);
  EXPECT_EQ(b.phase(), 0u);  // 1 of 2 left in phase 0
  b.arrive(1, err);
  EXPECT_EQ(b.phase(), 1u);
  EXPECT_EQ(b.expected(), 2u);
  EXPECT_EQ(b.pending(), 2u);
  b.arrive(1, err);
  b.arrive(1, err);
  EXPECT_EQ(b.phase(), 2u);
  EXPECT_TRUE(err.empty()) << err;
  b.arrive_drop(5, err);
  EXPECT_NE(err.find("arrive_drop of 5 with an expected count of only 2"), std::string::npos) << err;
}

// A kernel polling mbarrier.test_wait in a loop (PTX ISA 9.7.13.15.16: test_wait does not block,
// so the loop is the wait) for a TMA load's complete-tx (9.7.9.25, .mbarrier::complete_tx::bytes).
// Thread 0 expects `expect` bytes and loads a 64 x 64 tile of 2-byte elements (8192 bytes); every
// thread of both warps spins on the phase (`poll`), or tests it once and goes on to other work
// (`peek`, faulty), then reads its word of the tile.
struct TestWaitPoll : ::testing::Test {
  static constexpr int kThreads = 64;
  Device dev;
  LoadedModule* m = nullptr;
  alignas(64) std::uint8_t map[128];
  std::vector<std::uint32_t> in = std::vector<std::uint32_t>(64 * 64 / 2);
  std::uint64_t din = 0, dout = 0;

  static std::string kernel(const std::string& name, const std::string& after_test) {
    return ".visible .entry " + name + "(.param .align 128 .b8 map[128], .param .u64 out, .param .u32 expect)\n{\n"
           "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
           "  .shared .align 128 .b8 tile[8192];\n  .shared .align 8 .u64 bar;\n"
           "  mov.b64 %rd1, map;\n  ld.param.u64 %rd2, [out];\n  ld.param.u32 %r9, [expect];\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n  mov.u32 %r3, tile;\n"
           "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra SYNC;\n"
           "  mbarrier.init.shared::cta.b64 [%r2], 1;\n  fence.mbarrier_init.release.cluster;\n"
           "SYNC:\n  bar.sync 0;\n  @%p1 bra POLL;\n"
           "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r9;\n"
           "  cvta.param.u64 %rd3, %rd1;\n  mov.u32 %r4, 0;\n"
           "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd3, {%r4, %r4}], [%r2];\n"
           "POLL:\n  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n" + after_test +
           "  shl.b32 %r5, %r1, 2;\n  add.u32 %r6, %r3, %r5;\n  ld.shared.u32 %r7, [%r6];\n"
           "  mul.wide.u32 %rd4, %r1, 4;\n  add.u64 %rd5, %rd2, %rd4;\n  st.global.u32 [%rd5], %r7;\n"
           "  ret;\n}\n";
  }

  static std::string work(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "  add.u32 %r8, %r8, 1;\n";
    return s;
  }

  void SetUp() override {
    m = &dev.load(".version 8.0\n.target sm_90a\n.address_size 64\n" + kernel("poll", "  @!%p2 bra POLL;\n") +
                  kernel("peek", work(16)));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = 0x10001u * static_cast<std::uint32_t>(i) + 0x3F80u;
    din = dev.memory().alloc(in.size() * 4);
    std::memcpy(dev.memory().find(din, in.size() * 4), in.data(), in.size() * 4);
    dout = dev.memory().alloc(kThreads * 4);
    std::uint64_t dims[2] = {64, 64}, strides[1] = {128};
    std::uint32_t box[2] = {64, 64}, es[2] = {1, 1};
    ASSERT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, din, dims, strides, box, es, 0, 0 /*no swizzle*/, 0), "");
  }

  LaunchResult launch(std::uint32_t expect, std::uint64_t seed, const char* name = "poll") {
    std::memset(dev.memory().find(dout, kThreads * 4), 0, kThreads * 4);
    LaunchConfig c;
    c.block[0] = kThreads;
    c.seed = seed;
    c.step_limit = 200'000;  // the kernel needs a few hundred; a hang ends in a fraction of a second
    c.detect_races = true;
    void* args[] = {map, &dout, &expect};
    return dev.launch(*m, name, c, args);
  }
  bool read_the_tile() {
    const auto* out = reinterpret_cast<const std::uint32_t*>(dev.memory().find(dout, kThreads * 4));
    for (int t = 0; t < kThreads; ++t)
      if (out[t] != in[t]) return false;
    return true;
  }
};

// Seeds divisible by 4 land async work only when no warp can make progress; a warp spinning on
// test_wait makes none, so the load must still land (it used to wait forever for the spinners
// to stop: a step-limit finding on a correct kernel, seed 4 among verify's defaults).
TEST_F(TestWaitPoll, SpinningOnTestWaitLetsTheTmaLoadLand) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    LaunchResult r = launch(8192, seed);
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << emu_test::all(r);
    EXPECT_TRUE(r.reports.empty()) << "seed " << seed << ": " << emu_test::all(r);
    EXPECT_TRUE(read_the_tile()) << "seed " << seed;
  }
}

// The faulty twin: expect_tx announces twice the bytes the load brings, so the phase never
// completes and the spin never ends. It must end as a finding, under every kind of seed.
TEST_F(TestWaitPoll, SpinningOnAPhaseThatNeverCompletesIsReported) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    LaunchResult r = launch(16384, seed);
    ASSERT_FALSE(r.ok) << "seed " << seed;
    ASSERT_FALSE(r.reports.empty()) << "seed " << seed;
    EXPECT_EQ(r.reports[0].kind, ReportKind::StepLimit) << "seed " << seed << ": " << emu_test::all(r);
  }
}

// What seeds divisible by 4 are for stays: one failed test_wait is no spin, so a kernel that
// tests once and reads the tile anyway still reads it before the load lands.
TEST_F(TestWaitPoll, ReadingAfterOneFailedTestWaitStillSeesTheTileUnloaded) {
  for (std::uint64_t seed = 4; seed <= 200; seed += 4) {
    LaunchResult r = launch(8192, seed, "peek");
    ASSERT_TRUE(r.ok) << "seed " << seed << ": " << emu_test::all(r);
    EXPECT_TRUE(emu_test::has(r, ReportKind::Uninitialized)) << "seed " << seed << ": " << emu_test::all(r);
  }
}

}  // namespace
}  // namespace mgpu::emu
