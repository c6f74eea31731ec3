// The race detector's vector clocks directly (core/emu/check/race_detector.h): what a warp
// join orders, and that skipping a join which repeats one with nothing in between changes no
// verdict (the skip is what keeps wgmma-heavy kernels affordable: every .aligned instruction
// joins its warp).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/emu/check/race_detector.h"

namespace mgpu::emu {
namespace {

std::vector<int> lanes(int first, int count) {
  std::vector<int> t(count);
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(RaceDetector, AnUnorderedWriteAndReadRace) {
  RaceDetector rd(64, 256);
  EXPECT_FALSE(rd.on_write(1, 0, 4, 10).found);
  RaceDetector::Conflict c = rd.on_read(0, 0, 4, 11);
  ASSERT_TRUE(c.found);
  EXPECT_TRUE(c.earlier_was_write);
  EXPECT_EQ(c.thread, 1);
  EXPECT_EQ(c.pc, 10);
}

TEST(RaceDetector, AJoinOrdersWhatCameBeforeItOnly) {
  RaceDetector rd(64, 256);
  rd.on_write(1, 0, 4, 10);
  rd.join(lanes(0, 32));
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);  // before the join: ordered
  rd.on_write(1, 8, 4, 12);
  EXPECT_TRUE(rd.on_read(0, 8, 4, 13).found);   // after it: not
}

TEST(RaceDetector, ARepeatedJoinAfterAnAccessStillOrdersIt) {
  RaceDetector rd(64, 256);
  rd.join(lanes(0, 32));
  rd.on_write(1, 0, 4, 10);  // between two joins of the same lanes: the second is not skipped
  rd.join(lanes(0, 32));
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
}

TEST(RaceDetector, SkippedRepeatedJoinsChangeNoVerdict) {
  RaceDetector rd(64, 256);
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
  RaceDetector rd(64, 256);
  rd.join(lanes(0, 16));
  rd.on_write(20, 0, 4, 10);  // lane 20 was not in that join
  rd.join(lanes(0, 32));      // other lanes: a join of its own, which orders lane 20's write
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
  rd.on_write(33, 8, 4, 12);  // warp 1
  rd.join(lanes(0, 32));      // a repeat for warp 0: skipped, and it never spoke for warp 1
  EXPECT_TRUE(rd.on_read(0, 8, 4, 13).found);
}

TEST(RaceDetector, AnAcquireBetweenJoinsIsPassedOnByTheNext) {
  RaceDetector rd(64, 256);
  RaceDetector::Clock sync = rd.empty_clock();
  rd.join(lanes(0, 32));
  rd.on_write(40, 0, 4, 10);  // warp 1 writes, then releases
  rd.release(40, sync);
  rd.acquire(1, sync);        // lane 1 of warp 0 acquires: the next join must pass it on
  rd.join(lanes(0, 32));
  EXPECT_FALSE(rd.on_read(0, 0, 4, 11).found);
}

}  // namespace
}  // namespace mgpu::emu
