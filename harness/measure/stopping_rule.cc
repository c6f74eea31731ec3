#include "harness/measure/stopping_rule.h"

#include <algorithm>
#include <cmath>

namespace mgpu::harness {

SampleStats summarize(const std::vector<double>& samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / n;
  if (n > 1 && s.mean > 0) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.noise = std::sqrt(ss / (n - 1)) / s.mean;  // sample standard deviation, relative
  }
  return s;
}

void SampleCollector::add(double sample_ms) {
  samples_.push_back(sample_ms);
  total_ms_ += sample_ms;
  sum_ += sample_ms;
  sum_sq_ += sample_ms * sample_ms;
}

bool SampleCollector::converged() const {
  int n = static_cast<int>(samples_.size());
  if (n < rule_.min_samples || measured_s() < rule_.min_time_s || n < 2) return false;
  double mean = sum_ / n;
  double var = std::max(0.0, (sum_sq_ - n * mean * mean) / (n - 1));
  return mean > 0 && std::sqrt(var) / mean <= rule_.max_noise;
}

bool SampleCollector::done(double wall_s) const { return converged() || wall_s >= rule_.max_time_s; }

}  // namespace mgpu::harness
