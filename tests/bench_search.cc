// How fast each strategy finds a near-optimal config: evaluations until a config within 98%
// of the exhaustive optimum (time <= optimum / 0.98) has been measured, median over 10 seeds,
// on the cost model's landscape of the Hopper matmul for several shapes (replay of a GPU
// database is the same experiment on measured landscapes). Prints a markdown table.
//   build/tests/bench_search [seeds]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/matmul_template.h"
#include "search/strategy.h"

using namespace mgpu;

int main(int argc, char** argv) {
  int seeds = argc > 1 ? std::atoi(argv[1]) : 10;
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  std::vector<kernels::MatmulProblem> shapes = {{.m = 4096, .n = 4096, .k = 4096},
                                                {.m = 8192, .n = 8192, .k = 8192},
                                                {.m = 1024, .n = 8192, .k = 4096, .b_layout = kernels::BLayout::NK},
                                                {.m = 777, .n = 1000, .k = 200}};
  std::printf("| shape | valid configs | strategy | evaluations to 98%% (median of %d seeds) | %% of space | "
              "wall s |\n|---|---:|---|---:|---:|---:|\n", seeds);
  for (const kernels::MatmulProblem& p : shapes) {
    std::vector<core::TuningConfig> candidates;
    std::vector<double> value;
    t.space().enumerate([&](const core::TuningConfig& c) {
      if (t.why_invalid(p, c)) return;
      candidates.push_back(c);
      value.push_back(t.predict_ms(p, c, arch.default_device()));
    });
    double target = *std::min_element(value.begin(), value.end()) / 0.98;
    auto model = [&](const core::TuningConfig& c) { return t.predict_ms(p, c, arch.default_device()); };
    for (const char* name : {"random", "tpe", "cmaes", "model"}) {
      auto t0 = std::chrono::steady_clock::now();
      std::vector<int> evals;
      for (int seed = 0; seed < seeds; ++seed) {
        auto s = search::make_strategy(name, {t.space(), candidates, static_cast<std::uint64_t>(seed), model, {}});
        int n = 0;
        for (bool hit = false; !hit;) {
          auto asked = s->ask(1);
          if (asked.empty()) break;
          double v = model(asked[0]);
          ++n;
          hit = v <= target;
          s->tell(asked[0], v);
        }
        evals.push_back(n);
      }
      std::sort(evals.begin(), evals.end());
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      int median = evals[evals.size() / 2];
      std::printf("| %s | %zu | %s | %d | %.2f%% | %.1f |\n", p.key().c_str(), candidates.size(), name, median,
                  100.0 * median / candidates.size(), wall);
      std::fflush(stdout);
    }
  }
}
