// The replay measurer: answers trials from an existing results database instead of a GPU, like
// Kernel Tuner's simulation mode, so search strategies can be compared offline on landscapes
// that were really measured. Contract: built for one template and problem, it answers a config
// with the latest stored trial of that config (any device, any run; status, samples and
// verification as stored) and marks the answer source "replay"; a config the database never
// saw is an invalid_config trial saying so. Opening a path that is not a results database
// throws Error{InvalidInput}; the database is opened read-only and never changed.
#pragma once

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
  std::size_t known_configs() const { return answers_.size(); }

 private:
  std::map<std::string, results::TrialRow> answers_;  // config JSON -> latest trial
};

}  // namespace mgpu::harness
