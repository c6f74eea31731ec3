#include "harness/measure/replay_measurer.h"

namespace mgpu::harness {

ReplayMeasurer::ReplayMeasurer(const std::string& db_path, const std::string& template_name,
                               const std::string& problem_key) {
  results::Store store = results::Store::open(db_path, results::OpenMode::ReadOnly);
  for (results::TrialRow& r : store.trials())  // ordered by id: later trials overwrite earlier ones
    if (r.tmpl.name == template_name && r.problem.key == problem_key) answers_[r.config_json] = std::move(r);
}

Measurement ReplayMeasurer::measure(const TrialRequest& request) const {
  Measurement m;
  m.source = "replay";
  auto it = answers_.find(request.config.to_json());
  if (it == answers_.end()) {
    m.status = TrialStatus::InvalidConfig;
    m.message = "not in the replay database";
    return m;
  }
  const results::TrialRow& t = it->second;
  m.status = parse_trial_status(t.status);
  m.message = t.message;
  m.samples_ms = t.samples_ms;
  m.median_ms = t.median_ms.value_or(0);
  m.min_ms = t.min_ms.value_or(0);
  m.mean_ms = t.mean_ms.value_or(0);
  m.noise = t.noise.value_or(0);
  m.verification_error = t.verification_error;
  m.throttled = t.throttled;
  m.timer = t.timer;
  return m;
}

}  // namespace mgpu::harness
