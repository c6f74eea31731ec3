#include "results/regress.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace mgpu::results {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::Same: return "SAME";
    case Verdict::Faster: return "FASTER";
    case Verdict::Slower: return "SLOWER";
    case Verdict::Unstable: return "UNSTABLE";
  }
  return "?";
}

namespace {
using Key = std::tuple<std::string, std::string, std::string, std::string>;  // template, problem, device, config

std::map<Key, TrialRow> ok_trials(Store& store, std::int64_t run) {
  std::map<Key, TrialRow> out;
  for (TrialRow& t : store.trials(run)) {
    if (t.status != "ok" || !t.median_ms) continue;
    Key k{t.tmpl.name, t.problem.key, t.env.device_name, t.config_json};
    out[k] = std::move(t);  // the latest trial of a config within the run
  }
  return out;
}
}  // namespace

RegressReport compare_runs(Store& store, std::int64_t baseline_run, std::int64_t candidate_run, double threshold,
                           double max_noise) {
  std::map<Key, TrialRow> base = ok_trials(store, baseline_run), cand = ok_trials(store, candidate_run);
  RegressReport rep;
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<const TrialRow*, const TrialRow*>> best_b, best_c;
  for (auto& [k, b] : base) {
    auto group = std::make_tuple(std::get<0>(k), std::get<1>(k), std::get<2>(k));
    auto& wb = best_b[group].first;
    if (!wb || *b.median_ms < *wb->median_ms) wb = &b;
    auto it = cand.find(k);
    if (it == cand.end()) continue;
    const TrialRow& c = it->second;
    Comparison row{std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), *b.median_ms, *c.median_ms,
                   b.noise.value_or(0), c.noise.value_or(0)};
    row.predicted = b.source == "model" || c.source == "model";
    row.both_predicted = b.source == "model" && c.source == "model";
    rep.predicted += row.predicted;
    rep.both_predicted += row.both_predicted;
    row.change = (row.candidate_ms - row.base_ms) / row.base_ms;
    row.tolerance = std::max(threshold, row.base_noise + row.candidate_noise);
    if (row.base_noise > max_noise || row.candidate_noise > max_noise) row.verdict = Verdict::Unstable;
    else if (row.change >= row.tolerance) row.verdict = Verdict::Slower;
    else if (row.change <= -row.tolerance) row.verdict = Verdict::Faster;
    else row.verdict = Verdict::Same;
    if (!row.predicted) {  // a prediction is no measurement: neither a pass nor a regression
      rep.slower += row.verdict == Verdict::Slower;
      rep.faster += row.verdict == Verdict::Faster;
      rep.same += row.verdict == Verdict::Same;
      rep.unstable += row.verdict == Verdict::Unstable;
    }
    rep.rows.push_back(row);
  }
  for (auto& [k, c] : cand) {
    auto& wc = best_c[std::make_tuple(std::get<0>(k), std::get<1>(k), std::get<2>(k))].first;
    if (!wc || *c.median_ms < *wc->median_ms) wc = &c;
  }
  for (auto& [group, pb] : best_b) {
    auto it = best_c.find(group);
    if (it == best_c.end() || pb.first->config_json == it->second.first->config_json) continue;
    rep.winner_changes.push_back({std::get<0>(group), std::get<1>(group), std::get<2>(group), pb.first->config_json,
                                  it->second.first->config_json});
  }
  return rep;
}

std::string to_markdown(const RegressReport& r) {
  std::string s = fmt::format("**{} slower, {} faster, {} same, {} unstable**{}\n\n", r.slower, r.faster, r.same,
                              r.unstable, r.predicted ? " (measured comparisons)" : "");
  if (r.predicted > 0)
    s += fmt::format("**NO VERDICT for {} of {} comparisons: they are of cost-model predictions (source model), not "
                     "measurements -- {} with both runs predicted, {} with one. Nothing was measured there, so they are "
                     "left out of the counts above and are never a pass (PREDICTED below){}**\n\n",
                     r.predicted, r.rows.size(), r.both_predicted, r.predicted - r.both_predicted,
                     r.measured() == 0 ? "; with nothing else to compare, the runs get no verdict" : "");
  s += "| verdict | template | problem | device | baseline ms | candidate ms | change | noise tolerance | config |\n";
  s += "|---|---|---|---|---:|---:|---:|---:|---|\n";
  for (const Comparison& c : r.rows)
    s += fmt::format("| {}{} | {} | {} | {} | {:.4f} | {:.4f} | {:+.2f}% | {:.2f}% | `{}` |\n", to_string(c.verdict),
                     c.predicted ? " (PREDICTED)" : "",
                     c.template_name, c.problem_key, c.device, c.base_ms, c.candidate_ms, 100 * c.change,
                     100 * c.tolerance, c.config_json);
  for (const WinnerChange& w : r.winner_changes)
    s += fmt::format("\nwinner changed for {} {} on {}: `{}` -> `{}`\n", w.template_name, w.problem_key, w.device,
                     w.base_config, w.candidate_config);
  return s;
}

}  // namespace mgpu::results
