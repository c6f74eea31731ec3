// Smoke test of Google Benchmark: a registered benchmark runs through a custom reporter and
// reports iterations and a time, as the nightly suite and compile benchmarks will.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) collected.push_back(r);
  }
  std::vector<Run> collected;
};

TEST(GoogleBenchmark, RunsARegisteredBenchmarkAndReportsTimes) {
  benchmark::RegisterBenchmark("sum_1k", [](benchmark::State& state) {
    for (auto _ : state) {
      long s = 0;
      for (int i = 0; i < 1000; ++i) benchmark::DoNotOptimize(s += i);
    }
  })->Iterations(200);
  int argc = 1;
  char arg0[] = "smoke";
  char* argv[] = {arg0, nullptr};
  benchmark::Initialize(&argc, argv);
  CollectingReporter reporter;
  EXPECT_EQ(benchmark::RunSpecifiedBenchmarks(&reporter), 1u);
  ASSERT_EQ(reporter.collected.size(), 1u);
  EXPECT_EQ(reporter.collected[0].iterations, 200);
  EXPECT_GT(reporter.collected[0].GetAdjustedRealTime(), 0.0);
}

}  // namespace
