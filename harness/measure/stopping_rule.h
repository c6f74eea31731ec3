// When to stop taking samples, as nvbench does: at least `min_samples` and `min_time_s` of
// measured (kernel) time, then stop as soon as the relative noise (standard deviation over
// mean) is at most `max_noise`; stop regardless once `max_time_s` of wall time has passed,
// marking the result as not converged.
// quick() is for the search (cheap, rough), strict() for the final ranking of the top configs.
#pragma once

#include <vector>

namespace mgpu::harness {

struct StoppingRule {
  int min_samples = 10;
  double max_noise = 0.005;
  double min_time_s = 0.5;
  double max_time_s = 15.0;

  static StoppingRule quick() { return {5, 0.03, 0.02, 0.5}; }
  static StoppingRule strict() { return {20, 0.005, 0.5, 10.0}; }
};

struct SampleStats {
  double median = 0, min = 0, mean = 0, noise = 0;
};
SampleStats summarize(const std::vector<double>& samples);

// Feed samples one by one; done() says whether to stop.
class SampleCollector {
 public:
  explicit SampleCollector(StoppingRule rule) : rule_(rule) {}
  void add(double sample_ms);
  bool done(double wall_s) const;
  bool converged() const;  // enough samples and time, and the noise bound met
  const std::vector<double>& samples() const { return samples_; }
  double measured_s() const { return total_ms_ / 1000.0; }

 private:
  StoppingRule rule_;
  std::vector<double> samples_;
  double total_ms_ = 0;
  double sum_ = 0, sum_sq_ = 0;
};

}  // namespace mgpu::harness
