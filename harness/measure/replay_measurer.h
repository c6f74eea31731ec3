// The replay measurer: answers trials from an existing results database instead of a GPU, like
// Kernel Tuner's simulation mode, so search strategies can be compared offline on landscapes
// that were really measured. Contract: built for one template and problem, it answers a config
// with its stored result: a trial with a time (status ok, a positive finite median) or a failure
// of the config (any other status but env_error, which was the machine's). Rows that hold no
// result -- virtual-device verifications (source emulate: no clock, no time), ok rows without a
// time, env_error rows -- are not answers. Where a config has several, a measured one (any
// source but model) wins over a prediction, then the latest. The answer is marked source
// "replay". The search runs over the configs it answers (knows()): a database holding none
// for the template and problem is refused (Error{InvalidInput}) before anything is written, as
// is a path that is not a results database; the database is opened read-only and never changed.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"
#include "results/store.h"

namespace mgpu::harness {

class ReplayMeasurer {
 public:
  ReplayMeasurer(const std::string& db_path, const std::string& template_name, const std::string& problem_key);
  Measurement measure(const TrialRequest& request) const;
  bool knows(const std::string& config_json) const { return answers_.count(config_json) > 0; }
  std::size_t known_configs() const { return answers_.size(); }
  // How many of the answers are cost-model predictions (source model), and how many have a time.
  std::size_t predicted_answers() const { return predicted_; }
  std::size_t timed_answers() const { return timed_; }
  // A note for the user where the answers are (partly) predictions; empty where none are.
  std::string prediction_note(const std::string& db_path) const;

 private:
  std::map<std::string, results::TrialRow> answers_;  // config JSON -> the answering trial
  std::size_t predicted_ = 0, timed_ = 0;
};

// Throws Error{InvalidInput} when the replay database and the results database are one file
// (the run would answer its own trials from the rows it writes).
void check_replay_is_not_output(const std::string& replay_path, const std::string& db_path);

}  // namespace mgpu::harness
