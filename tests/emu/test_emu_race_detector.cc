// The race detector's vector clocks directly (core/emu/check/race_detector.h): what a warp
// join orders, and that skipping a join which repeats one with nothing in between changes no
// verdict (the skip is what keeps wgmma-heavy kernels affordable: every .aligned instruction
// joins its warp).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/emu/check/race_detector.h"
#include "isa_harness.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

std::vector<int> lanes(int first, int count) {
  std::vector<int> t(count);
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(RaceDetector, AnUnorderedWriteAndReadRace) {
  RaceDetector rd(1, 64, 256);
  EXPECT_FALSE(rd.on_write(1, 0, 4, 10).found);
  RaceDetector::Conflict c = rd.on_read(0, 0, 4, 11);
  ASSERT_TRUE(c.found);
  EXPECT_TRUE(c.earlier_was_write);
  EXPECT_EQ(c.thread, 1);
  EXPECT_EQ(c.pc, 10);
}

TEST(RaceDetector, AJoinOrdersWhatCameBeforeItOnly) {
  RaceDetector rd(1, 64, 256);
  rd.on_write(1, 0, 4, 10);
  rd.join(lanes(0, 32));
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);  // before the join: ordered
  rd.on_write(1, 8, 4, 12);
  EXPECT_TRUE(rd.on_read(0, 8, 4, 13).found);   // after it: not
}

TEST(RaceDetector, ARepeatedJoinAfterAnAccessStillOrdersIt) {
  RaceDetector rd(1, 64, 256);
  rd.join(lanes(0, 32));
  rd.on_write(1, 0, 4, 10);  // between two joins of the same lanes: the second is not skipped
  rd.join(lanes(0, 32));
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
}

TEST(RaceDetector, SkippedRepeatedJoinsChangeNoVerdict) {
  RaceDetector rd(1, 64, 256);
  rd.on_write(1, 0, 4, 10);
  for (int i = 0; i < 5; ++i) rd.join(lanes(0, 32));  // four repeats: skipped
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
  rd.on_write(1, 8, 4, 12);                           // after the joins: still unordered
  EXPECT_TRUE(rd.on_read(0, 8, 4, 13).found);
  for (int i = 0; i < 3; ++i) rd.join(lanes(0, 32));  // the first orders it, the rest skip
  rd.on_write(1, 16, 4, 14);
  EXPECT_FALSE(rd.on_read(0, 8, 4, 15).found);
  EXPECT_TRUE(rd.on_read(0, 16, 4, 16).found);
}

TEST(RaceDetector, AJoinOfOtherLanesOrThreadsIsNoRepeat) {
  RaceDetector rd(1, 64, 256);
  rd.join(lanes(0, 16));
  rd.on_write(20, 0, 4, 10);  // lane 20 was not in that join
  rd.join(lanes(0, 32));      // other lanes: a join of its own, which orders lane 20's write
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
  rd.on_write(33, 8, 4, 12);  // warp 1
  rd.join(lanes(0, 32));      // a repeat for warp 0: skipped, and it never spoke for warp 1
  EXPECT_TRUE(rd.on_read(0, 8, 4, 13).found);
}

TEST(RaceDetector, AnAcquireBetweenJoinsIsPassedOnByTheNext) {
  RaceDetector rd(1, 64, 256);
  RaceDetector::Clock sync = rd.empty_clock();
  rd.join(lanes(0, 32));
  rd.on_write(40, 0, 4, 10);  // warp 1 writes, then releases
  rd.release(40, sync);
  rd.acquire(1, sync);        // lane 1 of warp 0 acquires: the next join must pass it on
  rd.join(lanes(0, 32));
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
}

// Same-instruction writes by lanes of one warp (RaceDetector::Write). PTX ISA 8 orders no two
// threads by program order, so lanes writing a byte in one instruction are unordered; when they
// write the same value, whichever write a later read returns ("the value committed by some
// write", 8: Memory Consistency Model) holds that value, so the outcome is defined. Kernels of 64
// threads (two warps) on one shared word `cell`; each ends with bar.sync and every thread reading
// it back.
struct SameInstructionWrites : isa::IsaTest {
  LaunchResult run_races(const std::string& writes) {
    const std::string body =
        "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, 7;\n  setp.lt.u32 %p1, %r1, 32;\n"
        "  setp.eq.u32 %p2, %r1, 0;\n  setp.eq.u32 %p3, %r1, 1;\n" + writes +
        "  bar.sync 0;\n  ld.shared.u32 %r3, [cell];\n"
        "  mul.wide.u32 %rd1, %r1, 8;\n  add.u64 %rd2, %rd63, %rd1;\n  st.global.u32 [%rd2], %r3;\n";
    LoadedModule& m = dev.load(module(body, ".shared .align 4 .b32 cell;"));
    std::uint64_t din = dev.memory().alloc(8), dout = dev.memory().alloc(64 * 8);
    void* args[] = {&din, &dout};
    LaunchConfig c = cfg(64);
    c.detect_races = true;
    return dev.launch(m, "k", c, args);
  }
  static bool raced(const LaunchResult& r) { return emu_test::has(r, ReportKind::Race); }
};

TEST_F(SameInstructionWrites, OneWarpsLanesStoringOneValueToOneWordDoNotRace) {
  LaunchResult r = run_races("  @%p1 st.shared.u32 [cell], %r2;\n");  // the 32 lanes of warp 0
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_FALSE(raced(r)) << all(r);
}

TEST_F(SameInstructionWrites, OneWarpsLanesStoringDifferentValuesRace) {
  LaunchResult r = run_races("  @%p1 st.shared.u32 [cell], %r1;\n");  // each lane its tid
  EXPECT_TRUE(raced(r)) << all(r);
}

TEST_F(SameInstructionWrites, TwoWarpsStoringOneValueWithoutABarrierRace) {
  LaunchResult r = run_races("  st.shared.u32 [cell], %r2;\n");  // both warps, one value
  EXPECT_TRUE(raced(r)) << all(r);
}

// Two instructions of one warp: lane 0's store, then lane 1's, are unordered without
// bar.warp.sync (independent thread scheduling), even with one value; with it they are ordered.
TEST_F(SameInstructionWrites, LanesOfAWarpStoringInTwoInstructionsRaceUnlessWarpSynced) {
  const std::string lane0 = "  @%p2 st.shared.u32 [cell], %r2;\n", lane1 = "  @%p3 st.shared.u32 [cell], %r2;\n";
  EXPECT_TRUE(raced(run_races(lane0 + lane1)));
  LaunchResult r = run_races(lane0 + "  @%p1 bar.warp.sync 0xffffffff;\n" + lane1);
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_FALSE(raced(r)) << all(r);
}

}  // namespace
}  // namespace mgpu::emu
