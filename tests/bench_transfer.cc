// Transfer across a shape suite: evaluations until a config within 98% of each shape's
// exhaustive optimum has been measured, with and without a warm start from the winners of the
// (up to 3) nearest shapes tuned before it in the suite -- the same neighbours `mgpu-tune
// matmul --shapes` enqueues. Cost-model landscapes of the Hopper template (a replay database
// of GPU measurements is the same experiment on measured landscapes). Median over seeds;
// prints a markdown table.
//   build/tests/bench_transfer [suite] [seeds]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/matmul_suites.h"
#include "kernels/matmul_template.h"
#include "search/strategy.h"

using namespace mgpu;

int main(int argc, char** argv) {
  std::string suite_name = argc > 1 ? argv[1] : "llama3-8b";
  int seeds = argc > 2 ? std::atoi(argv[2]) : 10;
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  std::vector<kernels::MatmulProblem> suite = kernels::named_suite(suite_name);
  std::vector<core::TuningConfig> winners;  // each shape's exhaustive optimum, in suite order
  const char* strategies[] = {"random", "tpe"};
  std::printf("Suite %s on the cost model of %s, %d seeds: evaluations to 98%% of each shape's optimum (median)\n\n",
              suite_name.c_str(), std::string(arch.default_device().name).c_str(), seeds);
  std::printf("| shape | valid | random | random + warm | tpe | tpe + warm |\n|---|---:|---:|---:|---:|---:|\n");
  long totals[2][2] = {{0, 0}, {0, 0}};
  for (size_t i = 0; i < suite.size(); ++i) {
    const kernels::MatmulProblem& p = suite[i];
    auto model = [&](const core::TuningConfig& c) { return t.predict_ms(p, c, arch.default_device()); };
    std::vector<core::TuningConfig> candidates;
    double best = 1e300;
    core::TuningConfig best_config;
    t.space().enumerate([&](const core::TuningConfig& c) {
      if (t.why_invalid(p, c)) return;
      candidates.push_back(c);
      if (double v = model(c); v < best) best = v, best_config = c;
    });
    // Warm start: the winners of the nearest shapes before this one.
    std::vector<std::pair<double, size_t>> near;
    for (size_t j = 0; j < i; ++j) near.push_back({kernels::shape_distance(p, suite[j]), j});
    std::sort(near.begin(), near.end());
    std::vector<core::TuningConfig> warm;
    for (size_t j = 0; j < near.size() && j < 3; ++j) warm.push_back(winners[near[j].second]);
    std::printf("| %s | %zu", p.key().c_str(), candidates.size());
    for (int s = 0; s < 2; ++s)
      for (int w = 0; w < 2; ++w) {
        std::vector<int> evals;
        for (int seed = 0; seed < seeds; ++seed) {
          search::StrategyContext ctx{t.space(), candidates, static_cast<std::uint64_t>(seed), model,
                                      w ? warm : std::vector<core::TuningConfig>{}};
          auto strategy = search::make_strategy(strategies[s], ctx);
          int n = 0;
          for (bool hit = false; !hit;) {
            auto asked = strategy->ask(1);
            if (asked.empty()) break;
            double v = model(asked[0]);
            ++n;
            hit = v <= best / 0.98;
            strategy->tell(asked[0], v);
          }
          evals.push_back(n);
        }
        std::sort(evals.begin(), evals.end());
        int median = evals[evals.size() / 2];
        totals[s][w] += median;
        std::printf(" | %d", median);
      }
    std::printf(" |\n");
    std::fflush(stdout);
    winners.push_back(best_config);
  }
  std::printf("| **total (%zu shapes)** | | **%ld** | **%ld** | **%ld** | **%ld** |\n", suite.size(), totals[0][0],
              totals[0][1], totals[1][0], totals[1][1]);
}
