// Scoring a search as the autotuning methodology does (AutoTuningAssociation/
// autotuning_methodology): at each budget b, (baseline(b) - found(b)) / (baseline(b) - optimum),
// averaged over the budget range 1..B, where baseline(b) is the expected best of random search
// without replacement after b evaluations and B is where that baseline comes 95% of the way
// from the median to the optimum. 1: the optimum at once; 0: as good as random; < 0: worse.
// Contract: the baseline is exact (no sampling): b configs are drawn from ALL points, failed
// ones included (they are what a random search also draws); with j valid draws the expected
// best is the exact order statistic of the valid objectives, so random search's expected score
// is 0. (The methodology's calculated baseline leaves failed configs out and approximates the
// order statistic; this is the exact value of the same quantity for a space with failures.)
// By time: the budget T is B evaluations at the median recorded cost per valid point (the
// methodology's cutoff time), sampled at 100 equal steps; the baseline at time t is the one at
// round(t / mean cost per evaluation) evaluations (at least 1). Budget points before a run's
// first valid result are left out of its mean (the methodology's NaN).
#pragma once

#include <vector>

#include "search/landscape.h"
#include "search/landscape_search.h"

namespace mgpu::search {

class RandomBaseline {
 public:
  // Error{InvalidInput} when the landscape has no valid point.
  explicit RandomBaseline(const Landscape& landscape, double cutoff_fraction = 0.95);
  double optimum() const { return optimum_; }
  double median() const { return median_; }
  double expected_best(int evals) const;  // evals >= 1; past the space's size, the optimum
  int cutoff_evals() const { return cutoff_evals_; }
  double cutoff_time_s() const { return cutoff_time_s_; }
  double mean_cost_s() const { return mean_cost_s_; }

 private:
  double optimum_ = 0, median_ = 0, mean_cost_s_ = 0, cutoff_time_s_ = 0;
  int cutoff_evals_ = 1;
  std::vector<double> curve_;  // curve_[b-1] = expected best after b evaluations, b = 1..cutoff
  double worst_ = 0;
};

struct Score {
  double by_evals = 0;          // mean standardised value over budgets 1..cutoff_evals
  double by_time = 0;           // the same over the time budget
  double fraction_evals = 0;    // optimum / best found within cutoff_evals (0: none found)
  double fraction_time = 0;     // optimum / best found within cutoff_time_s
};

Score score(const Landscape& landscape, const RandomBaseline& baseline, const SearchTrace& trace);

}  // namespace mgpu::search
