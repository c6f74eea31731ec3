// Comparing two runs, as nvbench's compare does: per (template, problem, environment, config)
// measured in both, the relative change of the median, judged against both runs' noise.
// Verdicts: SAME (within max(threshold, noise_base + noise_candidate)), FASTER, SLOWER, or
// UNSTABLE (either run noisier than `max_noise`, so no verdict can be trusted). A changed
// winner (the best config per problem differs between the runs) is flagged separately.
#pragma once

#include <string>
#include <vector>

#include "results/store.h"

namespace mgpu::results {

enum class Verdict { Same, Faster, Slower, Unstable };
std::string_view to_string(Verdict v);

struct Comparison {
  std::string template_name, problem_key, device, config_json;
  double base_ms = 0, candidate_ms = 0, base_noise = 0, candidate_noise = 0;
  double change = 0;     // (candidate - base) / base
  double tolerance = 0;  // what counted as noise
  Verdict verdict = Verdict::Same;
  bool predicted = false;  // either side is a cost-model prediction (source model): nothing measured
};

struct WinnerChange {
  std::string template_name, problem_key, device, base_config, candidate_config;
};

struct RegressReport {
  std::vector<Comparison> rows;
  std::vector<WinnerChange> winner_changes;
  int slower = 0, faster = 0, same = 0, unstable = 0;
  int predicted = 0;  // rows comparing predictions: labelled, never a measured verdict
};

RegressReport compare_runs(Store& store, std::int64_t baseline_run, std::int64_t candidate_run,
                           double threshold = 0.02, double max_noise = 0.05);
std::string to_markdown(const RegressReport& r);

}  // namespace mgpu::results
