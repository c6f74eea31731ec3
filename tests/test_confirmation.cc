// Re-timing the winners on a GPU (harness/tune/confirmation.h), against a fake clock and fake
// strict measurements: the passes interleave, end once the ranking is settled or the time is
// spent, and a failed finalist keeps its search time.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "harness/tune/confirmation.h"

namespace mgpu::harness {
namespace {

struct Fake {
  std::map<std::string, std::vector<double>> times;  // each config's successive strict times
  std::map<std::string, int> taken;
  std::vector<std::string> log;  // the order of measurements
  double clock = 0, per_measurement_s = 5;
  StrictMeasure measure() {
    return [this](const std::string& c, bool first) -> std::optional<double> {
      log.push_back(c + (first ? "*" : ""));
      clock += per_measurement_s;
      const std::vector<double>& t = times.at(c);
      if (t.empty()) return std::nullopt;
      return t[static_cast<size_t>(taken[c]++) % t.size()];
    };
  }
  SecondsNow now() {
    return [this] { return clock; };
  }
};

std::vector<Finalist> finalists(std::initializer_list<std::pair<const char*, double>> l) {
  std::vector<Finalist> v;
  for (auto& [c, ms] : l) v.push_back({c, ms, {}});
  return v;
}

std::vector<std::string> order(const Confirmation& c) {
  std::vector<std::string> v;
  for (const Finalist& f : c.ranked) v.push_back(f.config);
  return v;
}

TEST(Confirmation, InterleavesAlternatingAndStopsOnceTheRankingHolds) {
  Fake f;
  // The search ranked a first, but b is faster; each is steady, their ranges overlap (no one is out).
  f.times = {{"a", {1.00, 1.05}}, {"b", {0.98, 1.03}}, {"c", {1.02, 1.06}}};
  std::atomic<bool> stop{false};
  Confirmation c = confirm(finalists({{"a", 0.9}, {"b", 0.95}, {"c", 0.97}}), f.measure(), {}, stop, f.now());
  // Pass 1 A B C, pass 2 C B A; after both, b a c as after the first: settled.
  EXPECT_EQ(f.log, (std::vector<std::string>{"a*", "b*", "c*", "c", "b", "a"}));
  EXPECT_EQ(c.passes, 2);
  EXPECT_EQ(c.measurements, 6);
  EXPECT_EQ(c.ended_because, "settled");
  EXPECT_EQ(order(c), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_DOUBLE_EQ(c.ranked[0].ms, (0.98 + 1.03) / 2);
}

TEST(Confirmation, AClearlySlowerFinalistLeavesTheRace) {
  Fake f;
  // c is slower in every measurement than the leader's slowest: out after pass 2, while a and b
  // swap places twice before their order holds.
  f.times = {{"a", {1.0, 1.2, 0.9}}, {"b", {1.1, 0.95, 1.15}}, {"c", {2.0}}};
  std::atomic<bool> stop{false};
  ConfirmOptions o;
  o.max_passes = 4;
  Confirmation c = confirm(finalists({{"a", 1}, {"b", 1}, {"c", 1}}), f.measure(), o, stop, f.now());
  EXPECT_EQ(f.taken["c"], 2);
  EXPECT_GE(f.taken["a"], 3);
  EXPECT_EQ(order(c).back(), "c");
  EXPECT_DOUBLE_EQ(c.ranked.back().ms, 2.0);
}

TEST(Confirmation, OneContenderLeftEndsIt) {
  Fake f;
  f.times = {{"a", {1.0}}, {"b", {1.5}}};
  std::atomic<bool> stop{false};
  Confirmation c = confirm(finalists({{"b", 0.8}, {"a", 0.9}}), f.measure(), {}, stop, f.now());
  EXPECT_EQ(c.ended_because, "one contender left");
  EXPECT_EQ(c.measurements, 4);
  EXPECT_EQ(order(c), (std::vector<std::string>{"a", "b"}));
}

TEST(Confirmation, TheTimeBudgetBoundsIt) {
  Fake f;
  f.times = {{"a", {1.0, 1.1}}, {"b", {1.05, 0.99}}, {"c", {1.02, 1.04}}, {"d", {1.03, 1.01}}};
  std::atomic<bool> stop{false};
  ConfirmOptions o;
  o.budget_s = 12;  // 5 s per measurement: 3 measurements, then the budget is spent
  Confirmation c = confirm(finalists({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 0.5}}), f.measure(), o, stop, f.now());
  EXPECT_EQ(c.ended_because, "time budget");
  EXPECT_EQ(c.measurements, 3);
  // d was never re-timed: it keeps its search time, and that ranks it first.
  EXPECT_EQ(order(c).front(), "d");
  EXPECT_DOUBLE_EQ(c.ranked.front().ms, 0.5);
}

TEST(Confirmation, AFinalistThatFailsKeepsItsSearchTimeAndAStopEndsIt) {
  Fake f;
  f.times = {{"a", {}}, {"b", {1.0}}, {"c", {1.1}}};
  std::atomic<bool> stop{false};
  Confirmation c = confirm(finalists({{"a", 0.7}, {"b", 1.2}, {"c", 1.3}}), f.measure(), {}, stop, f.now());
  EXPECT_EQ(f.taken["a"], 0);
  EXPECT_EQ(std::count(f.log.begin(), f.log.end(), "a*"), 1);  // tried once, then out of the race
  EXPECT_EQ(order(c), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_DOUBLE_EQ(c.ranked[0].ms, 0.7);

  stop = true;
  Fake g;
  g.times = {{"a", {1.0}}};
  Confirmation s = confirm(finalists({{"a", 1}}), g.measure(), {}, stop, g.now());
  EXPECT_EQ(s.ended_because, "stopped");
  EXPECT_EQ(s.measurements, 0);
}

// One measurement's cap: an equal share of two passes over the finalists, within [floor, strict cap].
TEST(Confirmation, OneMeasurementIsCappedAtItsShareOfTheBudget) {
  ConfirmOptions o;
  o.budget_s = 5;  // the H200 lease's --confirm-budget 5 with --top 3 ran one measurement for 10.6 s
  EXPECT_DOUBLE_EQ(measurement_cap_s(o, 3, 10.0), 5.0 / 6);
  o.budget_s = 120;
  EXPECT_DOUBLE_EQ(measurement_cap_s(o, 3, 10.0), 10.0);  // never above the strict rule's own cap
  o.budget_s = 0.1;
  EXPECT_DOUBLE_EQ(measurement_cap_s(o, 10, 10.0), 0.5);  // never below the floor
  EXPECT_DOUBLE_EQ(measurement_cap_s(o, 0, 10.0, 0.01), 0.05);  // no finalist counts as one
}

}  // namespace
}  // namespace mgpu::harness
