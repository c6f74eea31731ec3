#include "harness/tune/warm_start.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/measure/trial_record.h"
#include "kernels/matmul_suites.h"

namespace mgpu::harness {

std::vector<Neighbour> nearest_winners(results::Store& store, const results::TemplateId& tmpl,
                                       const results::Environment& env, const std::string& source,
                                       const kernels::MatmulProblem& problem, int shapes) {
  if (shapes <= 0) return {};
  // The best ok trial per other problem, for this template version, device and source.
  std::map<std::string, results::TrialRow> best;
  // Only this template's ok rows of the source are read: a row of another op's study, damaged or
  // not, is none of this study's business (the attention tuner reads its own study alone too).
  results::TrialFilter rows;
  rows.status = "ok";
  rows.source = source;
  rows.template_name = tmpl.name;
  for (results::TrialRow& t : store.trials(rows)) {
    if (t.status != "ok" || !t.median_ms || t.source != source || t.tmpl.name != tmpl.name ||
        t.tmpl.source_hash != tmpl.source_hash || t.env.device_name != env.device_name ||
        t.problem.key == problem.key())
      continue;
    auto it = best.find(t.problem.key);
    if (it == best.end() || *t.median_ms < *it->second.median_ms) best[t.problem.key] = std::move(t);
  }
  std::vector<Neighbour> out;
  for (const auto& [key, t] : best) {
    double d = kernels::shape_distance(problem, matmul_problem(t.problem));
    if (std::isfinite(d)) out.push_back({key, d, core::TuningConfig::from_json(t.config_json)});
  }
  std::stable_sort(out.begin(), out.end(), [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  if (static_cast<int>(out.size()) > shapes) out.resize(shapes);
  return out;
}

}  // namespace mgpu::harness
