#include "harness/tune/landscape_tune.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "harness/tune/t4_landscape.h"
#include "harness/version.h"
#include "results/store.h"
#include "results/t4_format.h"
#include "search/landscape_search.h"

namespace mgpu::harness {

bool is_t4_replay(const std::string& device) {
  if (device.rfind("replay:", 0) != 0) return false;
  std::string path = device.substr(7);
  return std::filesystem::is_regular_file(path) && !results::is_sqlite_file(path);
}

TuneReport tune_landscape(const TuneOptions& o, const std::atomic<bool>& interrupted,
                          const std::function<void(const Progress&)>& on_progress) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string path = o.device.substr(7);
  search::Landscape land = read_t4_landscape(path);
  std::string file = std::filesystem::path(path).filename().string();
  results::TemplateId tmpl{"t4:" + land.name(), "t4", "t4"};
  results::ProblemRecord problem;
  problem.kernel = land.name();
  problem.key = "t4";
  results::Environment env;
  env.device_name = "replay:" + file;

  TuneReport rep;
  rep.source = "replay";
  rep.device_name = env.device_name;
  rep.problem = tmpl.name;  // the landscape's own kernel, not the default matmul (round 19, F48)
  rep.note = fmt::format("replaying {}: the space is its {} recorded configurations ({} valid); times are the file's "
                         "median runtimes{}", file, land.points().size(), land.valid_sorted().size(),
                         o.time_budget_s > 0 ? ", and the time budget is spent by its recorded compile + benchmark times" : "");
  if (o.notify) o.notify(rep.note);
  auto strategy = search::make_strategy(o.strategy, search::landscape_context(land, o.seed));

  results::Store store = results::Store::open(o.db, results::OpenMode::ReadWrite);
  std::map<std::string, double> ok;  // config -> median ms
  double simulated_s = 0;  // this run's: the budget is the run's, as in tune()
  int done = 0;
  for (const std::string& c : store.measured_configs(tmpl, problem.key, env, "replay")) {
    const search::LandscapePoint* p = land.find(core::TuningConfig::from_json(c));
    if (!p) continue;
    strategy->tell(p->config, p->ms);
    if (p->ms) ok[c] = *p->ms;
    ++done;
  }
  rep.trials_resumed = done;
  std::int64_t run = store.begin_run("tune", o.arguments, version_string());
  rep.run_uuid = store.run(std::to_string(run)).uuid;
  bool out_of_time = false;
  while (done < o.trials && !interrupted) {
    if (o.time_budget_s > 0 && simulated_s >= o.time_budget_s) {
      out_of_time = true;
      break;
    }
    std::vector<core::TuningConfig> asked = strategy->ask(1);
    if (asked.empty()) break;
    const search::LandscapePoint* p = land.find(asked.front());
    results::TrialRecord t;
    t.run_id = run;
    t.tmpl = tmpl;
    t.problem = problem;
    t.config_json = asked.front().to_json();
    t.env = env;
    t.source = "replay";
    if (!p) {  // strategies ask candidates only; kept for a strategy that would not
      strategy->tell(asked.front(), std::nullopt);
      continue;
    }
    simulated_s += p->cost_s;
    if (p->ms) {
      t.median_ms = t.min_ms = t.mean_ms = *p->ms;
      t.samples_ms = {*p->ms};
      ok[t.config_json] = *p->ms;
    } else {
      t.status = "invalid_config";
      t.message = fmt::format("failed when {} was recorded", file);
      ++rep.failed;
    }
    store.record_trial(t);
    strategy->tell(p->config, p->ms);
    ++done;
    ++rep.trials_this_run;
    if (on_progress) {
      auto best = std::min_element(ok.begin(), ok.end(), [](auto& a, auto& b) { return a.second < b.second; });
      std::optional<RankedConfig> b;
      if (best != ok.end()) b = RankedConfig{core::TuningConfig::from_json(best->first), best->second, 0, 0};
      on_progress({"", done, o.trials, simulated_s, b,
                   TrialEvent{t.config_json, t.status, t.message, p->ms.value_or(0), p->cost_s * 1000, 0}});
    }
  }
  store.end_run(run);
  rep.study_trials = done;
  rep.interrupted = interrupted;
  rep.exhausted = done < o.trials && !out_of_time && !interrupted;
  std::vector<std::pair<std::string, double>> ranked(ok.begin(), ok.end());
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second < b.second; });
  for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < o.top; ++i)
    rep.top.push_back({core::TuningConfig::from_json(ranked[i].first), ranked[i].second, 0, 0});
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace mgpu::harness
