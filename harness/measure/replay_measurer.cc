#include "harness/measure/replay_measurer.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace mgpu::harness {

namespace {

bool timed(const results::TrialRow& r) {
  return r.status == "ok" && r.median_ms && std::isfinite(*r.median_ms) && *r.median_ms > 0;
}

// A row that says something about the config at this problem: its time, or how it failed.
bool answers(const results::TrialRow& r) {
  if (r.status == "ok") return timed(r) && r.source != "emulate";
  return r.status != "env_error";  // the machine failed, not the config
}

}  // namespace

ReplayMeasurer::ReplayMeasurer(const std::string& db_path, const std::string& template_name,
                               const std::string& problem_key) {
  results::Store store = results::Store::open(db_path, results::OpenMode::ReadOnly);
  std::set<std::string> other_problems;
  std::size_t rows_here = 0;
  for (results::TrialRow& r : store.trials()) {  // ordered by id: later trials overwrite earlier ones
    if (r.tmpl.name != template_name) continue;
    if (r.problem.key != problem_key) {
      if (answers(r)) other_problems.insert(r.problem.key);
      continue;
    }
    ++rows_here;
    if (!answers(r)) continue;
    auto it = answers_.find(r.config_json);
    // A measurement is not replaced by a later prediction of the same config.
    if (it != answers_.end() && it->second.source != "model" && r.source == "model") continue;
    answers_[r.config_json] = std::move(r);
  }
  for (const auto& [config, r] : answers_) {
    predicted_ += r.source == "model";
    timed_ += timed(r);
  }
  if (answers_.empty()) {
    std::string why =
        rows_here > 0
            ? fmt::format("its {} trials of {} at {} hold no result to replay (no time and no failure of a config: "
                          "virtual-device verifications, --device emulate runs and env_error trials have none)",
                          rows_here, template_name, problem_key)
            : fmt::format("it holds no trial of {} at {}", template_name, problem_key);
    std::string where;
    if (!other_problems.empty()) {
      std::vector<std::string> some(other_problems.begin(), other_problems.end());
      if (some.size() > 5) some.resize(5);
      where = fmt::format("; it has results for {}{}", fmt::join(some, ", "), other_problems.size() > 5 ? ", ..." : "");
    }
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--device replay:{}: nothing to replay: {}{}; nothing was written", db_path, why, where));
  }
}

std::string ReplayMeasurer::prediction_note(const std::string& db_path) const {
  if (predicted_ == 0) return "";
  if (predicted_ == answers_.size())
    return fmt::format("replay:{} holds cost-model predictions (source model) for this problem, not measurements: the "
                       "replayed times are predictions, nothing was measured",
                       db_path);
  return fmt::format("replay:{}: {} of the {} configs it answers are cost-model predictions (source model), not "
                     "measurements: their replayed times are predictions",
                     db_path, predicted_, answers_.size());
}

Measurement ReplayMeasurer::measure(const TrialRequest& request) const {
  Measurement m;
  m.source = "replay";
  auto it = answers_.find(request.config.to_json());
  if (it == answers_.end()) {
    // The search runs over the configs the database answers (knows()): only a caller that
    // asks outside them gets here.
    m.status = TrialStatus::InvalidConfig;
    m.message = "not in the replay database";
    return m;
  }
  const results::TrialRow& t = it->second;
  m.status = parse_trial_status(t.status);
  m.message = t.message;
  m.samples_ms = t.samples_ms;
  if (m.status == TrialStatus::Ok) {  // answers() let through only positive finite medians
    m.median_ms = *t.median_ms;
    m.min_ms = t.min_ms.value_or(0);
    m.mean_ms = t.mean_ms.value_or(0);
    m.noise = t.noise.value_or(0);
  }
  m.verification_error = t.verification_error;
  m.throttled = t.throttled;
  m.timer = t.timer;
  return m;
}

void check_replay_is_not_output(const std::string& replay_path, const std::string& db_path) {
  std::error_code ec;
  if (std::filesystem::equivalent(replay_path, db_path, ec) && !ec)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--device replay:{} is the results database (--db {}): a replay answers from another "
                                  "database's trials; write to a different --db; nothing was written",
                                  replay_path, db_path));
}

}  // namespace mgpu::harness
