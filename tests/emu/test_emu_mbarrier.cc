// Spec-derived tests for core/emu/engines/mbarrier: PTX ISA 9.7.13.15 "mbarrier" (sections
// .2 contents and valid ranges, .4 phase, .5 tx-count with expect-tx / complete-tx, .6 phase
// completion, .7 arrive-on, and test_wait/try_wait's phaseParity / state operands).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/emu/engines/mbarrier.h"

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

}  // namespace
}  // namespace mgpu::emu
