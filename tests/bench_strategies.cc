// Search strategies judged on measured landscapes (issue 20): each strategy replays its search
// on T4 files of brute-forced GPU results (and on our matmul template's cost-model landscape),
// scored as the autotuning methodology does (search/methodology_score.h) over `seeds` seeds,
// by evaluations and by simulated time; with --peer, Kernel Tuner's strategies in simulation
// mode on the same files (scripts/kt_simulate.py, in the folder scripts/kernel_tuner.sh
// installs), their evaluation sequences scored by the same code. Prints a markdown table.
// Default strategies: random, tpe-native, cmaes (Optuna's tpe: add it with --strategies; its
// per-step cost grows with the trials, hours at the 2,000-evaluation budgets of some files).
//   build/tests/bench_strategies [--seeds N] [--strategies a,b,..] [--peer DIR] [--peer-strategies a,b]
//                                [--max-budget name=N,..] [--no-model-row] FILE.json[.gz]...
// --max-budget skips a strategy (ours or the peer's) on files whose budget exceeds N evaluations
// (Optuna's tpe and Kernel Tuner's bayes_opt cost seconds per step at thousands of trials), with
// a row saying so, so the whole comparison still runs as one command.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/tune/t4_landscape.h"
#include "kernels/matmul_template.h"
#include "search/landscape_search.h"
#include "search/methodology_score.h"

using namespace mgpu;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / v.size();
}

struct Row {
  std::string landscape, strategy, tuner;
  std::vector<search::Score> scores;
  double overhead_ms_per_eval = 0;
};

// The cost model's landscape of the Hopper matmul at 4096^3: every valid config, answered by
// its prediction; evaluations cost 1 s each (the model has no compile time to replay).
search::Landscape model_landscape() {
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  kernels::MatmulProblem p{.m = 4096, .n = 4096, .k = 4096};
  std::vector<search::LandscapePoint> points;
  t.space().enumerate([&](const core::TuningConfig& c) {
    if (!t.why_invalid(p, c)) points.push_back({c, t.predict_ms(p, c, arch.default_device()), 1.0});
  });
  return search::Landscape("matmul_sm90a_4096^3 (cost model)", std::move(points));
}

// Runs one of our strategies until both the evaluation and the time budget are spent.
search::SearchTrace run_ours(const search::Landscape& l, const search::RandomBaseline& b, const std::string& name,
                             std::uint64_t seed, const std::function<double(const core::TuningConfig&)>& model) {
  search::StrategyContext ctx = search::landscape_context(l, seed);
  ctx.model = model;
  auto s = search::make_strategy(name, ctx);
  search::SearchTrace trace = search::search_landscape(l, *s, b.cutoff_evals());
  double elapsed = trace.empty() ? 0 : trace.back().elapsed_s;
  if (elapsed < b.cutoff_time_s()) {
    for (search::Evaluation e : search::search_landscape(l, *s, 1 << 30, b.cutoff_time_s() - elapsed)) {
      e.elapsed_s += elapsed;
      trace.push_back(e);
    }
  }
  return trace;
}

// Kernel Tuner's runs on a T4 file: one JSON line per seed, the configs in evaluation order.
std::vector<search::SearchTrace> run_peer(const std::string& peer_dir, const std::string& file, const search::Landscape& l,
                                          const search::RandomBaseline& b, const std::string& strategy, int seeds) {
  int budget = std::max(b.cutoff_evals(), static_cast<int>(b.cutoff_time_s() / b.mean_cost_s() * 1.5) + 1);
  std::string cmd = fmt::format("'{}/bin/python' '{}/kt_simulate.py' --t4 '{}' --strategy {} --seeds {} --max-fevals {}",
                                peer_dir, MGPU_SCRIPTS_DIR, file, strategy, seeds, budget);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + cmd);
  std::vector<search::SearchTrace> out;
  std::string line;
  for (int c; (c = std::fgetc(pipe)) != EOF;) {
    if (c != '\n') {
      line.push_back(static_cast<char>(c));
      continue;
    }
    nlohmann::json seq = nlohmann::json::parse(line);
    line.clear();
    std::vector<core::TuningConfig> configs;
    for (const auto& c : seq) configs.push_back(core::TuningConfig::from_json(c.dump()));
    out.push_back(search::trace_of(l, configs));
  }
  if (int rc = pclose(pipe); rc != 0) throw std::runtime_error(fmt::format("{} failed ({})", cmd, rc));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 20;
  std::vector<std::string> ours = {"random", "tpe-native", "cmaes"}, peers = {"random_sample", "dual_annealing", "genetic_algorithm", "bayes_opt"};
  std::string peer_dir;
  bool model_row = true;
  std::map<std::string, int> max_budget;  // strategy -> largest budget (evaluations) it runs at
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--seeds") seeds = std::atoi(next().c_str());
    else if (a == "--strategies") ours = split(next());
    else if (a == "--peer") peer_dir = next();
    else if (a == "--peer-strategies") peers = split(next());
    else if (a == "--no-model-row") model_row = false;
    else if (a == "--max-budget")
      for (const std::string& kv : split(next())) {
        auto eq = kv.find('=');
        if (eq == std::string::npos) {
          std::fprintf(stderr, "bench_strategies: --max-budget takes name=N,... (got '%s')\n", kv.c_str());
          return 2;
        }
        max_budget[kv.substr(0, eq)] = std::atoi(kv.c_str() + eq + 1);
      }
    else files.push_back(a);
  }
  std::vector<Row> rows;
  std::map<std::string, std::pair<int, double>> cutoffs;
  std::printf("Score: 1 = optimum at once, 0 = random search without replacement (exact), median [25%%, 75%%] over %d "
              "seeds; budget = evaluations (time) until random search is expected 95%% of the way from the median "
              "to the optimum. Found: optimum / best found within the budget, median.\n\n", seeds);
  std::printf("| landscape | budget: evals / simulated s | tuner | strategy | score by evals | mean | score by time | "
              "found (evals) | found (time) | wall ms/eval |\n|---|---|---|---|---|---:|---|---:|---:|---:|\n");
  // Rows are printed as they finish, so a long run shows its results as it goes.
  auto print_row = [&](const Row& r) {
    std::vector<double> se, st, fe, ft;
    for (const search::Score& s : r.scores) {
      se.push_back(s.by_evals);
      st.push_back(s.by_time);
      fe.push_back(s.fraction_evals);
      ft.push_back(s.fraction_time);
    }
    std::printf("| %s | %d / %.0f | %s | %s | %.3f [%.3f, %.3f] | %.3f | %.3f [%.3f, %.3f] | %.1f%% | %.1f%% | %.2f |\n",
                r.landscape.c_str(), cutoffs[r.landscape].first, cutoffs[r.landscape].second, r.tuner.c_str(),
                r.strategy.c_str(), quantile(se, 0.5), quantile(se, 0.25), quantile(se, 0.75), mean(se), quantile(st, 0.5),
                quantile(st, 0.25), quantile(st, 0.75), 100 * quantile(fe, 0.5), 100 * quantile(ft, 0.5),
                r.overhead_ms_per_eval);
    std::fflush(stdout);
  };
  auto skipped = [&](const std::string& landscape, const std::string& tuner, const std::string& name) {
    auto it = max_budget.find(name);
    if (it == max_budget.end() || cutoffs[landscape].first <= it->second) return false;
    std::printf("| %s | %d / %.0f | %s | %s | not run: budget over %d evaluations | | | | | |\n", landscape.c_str(),
                cutoffs[landscape].first, cutoffs[landscape].second, tuner.c_str(), name.c_str(), it->second);
    return true;
  };
  auto bench = [&](const search::Landscape& l, const std::string& file,
                   const std::function<double(const core::TuningConfig&)>& model) {
    search::RandomBaseline b(l);
    cutoffs[l.name()] = {b.cutoff_evals(), b.cutoff_time_s()};
    for (const std::string& name : ours) {
      if (name == "model" && !model) continue;
      if (skipped(l.name(), "mgpu-tune", name)) continue;
      Row r{l.name(), name, "mgpu-tune", {}, 0};
      auto t0 = std::chrono::steady_clock::now();
      size_t evals = 0;
      for (int seed = 0; seed < seeds; ++seed) {
        search::SearchTrace t = run_ours(l, b, name, static_cast<std::uint64_t>(seed), model);
        evals += t.size();
        r.scores.push_back(search::score(l, b, t));
      }
      r.overhead_ms_per_eval = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / evals;
      print_row(r);
      rows.push_back(std::move(r));
      std::fprintf(stderr, "%s %s done\n", l.name().c_str(), name.c_str());
    }
    if (peer_dir.empty() || file.empty()) return;
    for (const std::string& name : peers) {
      if (skipped(l.name(), "Kernel Tuner", name)) continue;
      Row r{l.name(), name, "Kernel Tuner", {}, 0};
      auto t0 = std::chrono::steady_clock::now();
      size_t evals = 0;
      for (const search::SearchTrace& t : run_peer(peer_dir, file, l, b, name, seeds)) {
        evals += t.size();
        r.scores.push_back(search::score(l, b, t));
      }
      r.overhead_ms_per_eval = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / std::max<size_t>(evals, 1);
      print_row(r);
      rows.push_back(std::move(r));
      std::fprintf(stderr, "%s %s done\n", l.name().c_str(), name.c_str());
    }
  };
  for (const std::string& f : files) bench(harness::read_t4_landscape(f), f, {});
  if (model_row) {
    search::Landscape l = model_landscape();
    const core::ArchSpec& arch = core::parse_arch("sm_90a");
    kernels::MatmulProblem p{.m = 4096, .n = 4096, .k = 4096};
    auto model = [&](const core::TuningConfig& c) {
      return kernels::matmul_template(arch).predict_ms(p, c, arch.default_device());
    };
    ours.push_back("model");
    bench(l, "", model);
  }

  std::map<std::string, std::vector<double>> per_strategy;  // tuner/strategy -> per-file mean score (evals)
  std::map<std::string, std::vector<double>> per_strategy_time;
  for (const Row& r : rows) {
    std::vector<double> se, st;
    for (const search::Score& s : r.scores) {
      se.push_back(s.by_evals);
      st.push_back(s.by_time);
    }
    if (r.landscape.find("cost model") == std::string::npos) {
      per_strategy[r.tuner + " " + r.strategy].push_back(mean(se));
      per_strategy_time[r.tuner + " " + r.strategy].push_back(mean(st));
    }
  }
  std::printf("\nMean score over the %zu T4 files (mean over seeds, then over the files it ran on):\n\n| tuner strategy "
              "| files | by evals | by time | lowest file (evals) |\n|---|---:|---:|---:|---:|\n", files.size());
  for (const auto& [k, v] : per_strategy)
    std::printf("| %s | %zu | %.3f | %.3f | %.3f |\n", k.c_str(), v.size(), mean(v), mean(per_strategy_time[k]),
                *std::min_element(v.begin(), v.end()));
  return 0;
}
