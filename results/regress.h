// Comparing two runs, as nvbench's compare does: per (template, problem, environment, config)
// measured in both, the relative change of the median, judged against both runs' noise.
// Verdicts: SAME (within max(threshold, noise_base + noise_candidate)), FASTER, SLOWER, or
// UNSTABLE (either run noisier than `max_noise`, so no verdict can be trusted). A changed
// winner (the best config per problem differs between the runs) is flagged separately.
// A comparison where either side is a cost-model prediction (source model) keeps its verdict,
// labelled PREDICTED, but is no measurement: the slower/faster/same/unstable counts are of
// measured comparisons only, and `predicted` counts the others (never a pass, never a
// regression; `regress` exits 3 when they are all there is).
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
  bool both_predicted = false;  // both sides are
};

struct WinnerChange {
  std::string template_name, problem_key, device, base_config, candidate_config;
};

struct RegressReport {
  std::vector<Comparison> rows;
  std::vector<WinnerChange> winner_changes;
  int slower = 0, faster = 0, same = 0, unstable = 0;  // measured comparisons
  int predicted = 0;       // comparisons with a prediction on either side: labelled, never a verdict
  int both_predicted = 0;  // of those, predictions on both sides
  int measured() const { return static_cast<int>(rows.size()) - predicted; }
};

RegressReport compare_runs(Store& store, std::int64_t baseline_run, std::int64_t candidate_run,
                           double threshold = 0.02, double max_noise = 0.05);
std::string to_markdown(const RegressReport& r);

}  // namespace mgpu::results
