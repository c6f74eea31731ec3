#include "search/methodology_score.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace mgpu::search {
namespace {

// E[min of j draws without replacement] of ascending values v, for j = 1..jmax: with
// S_i = P(min index >= i) = C(V-i, j)/C(V, j) (0-based i), E = sum_i v_i (S_i - S_{i+1}).
std::vector<double> valid_order_statistics(const std::vector<double>& v, int jmax) {
  const int n = static_cast<int>(v.size());
  std::vector<double> out;
  for (int j = 1; j <= jmax; ++j) {
    if (j >= n) {
      out.push_back(v.front());
      continue;
    }
    double e = 0, s = 1;  // s = S_i
    for (int i = 0; i < n && s > 0; ++i) {
      double next = i + j < n ? s * static_cast<double>(n - i - j) / (n - i) : 0;
      e += v[i] * (s - next);
      s = next;
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace

RandomBaseline::RandomBaseline(const Landscape& l, double cutoff_fraction) {
  const std::vector<double>& v = l.valid_sorted();
  if (v.empty()) throw core::Error(core::ErrorKind::InvalidInput, "the landscape has no valid configuration to score against");
  const int total = static_cast<int>(l.points().size()), valid = static_cast<int>(v.size());
  optimum_ = v.front();
  worst_ = v.back();
  median_ = valid % 2 ? v[valid / 2] : (v[valid / 2 - 1] + v[valid / 2]) / 2;
  const double target = optimum_ + (median_ - optimum_) * (1 - cutoff_fraction);
  const int invalid = total - valid;
  std::vector<double> ev;  // ev[j-1]: expected best of j valid draws
  auto lchoose = [](int n, int k) { return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0); };
  // The expected best of b draws from all points: a hypergeometric mix over j valid draws.
  auto expected = [&](int b) {
    if (static_cast<int>(ev.size()) < std::min(b, valid))
      ev = valid_order_statistics(v, std::min(valid, std::max<int>(2 * static_cast<int>(ev.size()), b)));
    double e = 0;
    const double denom = lchoose(total, b);
    for (int j = std::max(0, b - invalid); j <= std::min(b, valid); ++j)
      e += std::exp(lchoose(valid, j) + lchoose(invalid, b - j) - denom) * (j == 0 ? worst_ : ev[j - 1]);
    return e;
  };
  // Grown until it reaches the target (it does by b = total, where it is the optimum).
  for (int b = 1; b <= total; ++b) {
    curve_.push_back(expected(b));
    if (curve_.back() <= target + 1e-12 * std::abs(target)) break;
  }
  cutoff_evals_ = static_cast<int>(curve_.size());
  double sum = 0;
  std::vector<double> valid_costs;
  for (const LandscapePoint& p : l.points()) {
    sum += p.cost_s;
    if (p.ms) valid_costs.push_back(p.cost_s);
  }
  mean_cost_s_ = sum / total;
  std::sort(valid_costs.begin(), valid_costs.end());
  size_t m = valid_costs.size();
  double median_cost = m % 2 ? valid_costs[m / 2] : (valid_costs[m / 2 - 1] + valid_costs[m / 2]) / 2;
  cutoff_time_s_ = cutoff_evals_ * median_cost;
  // The time score looks the baseline up at t / mean cost evaluations, up to the cutoff time.
  int time_evals = mean_cost_s_ > 0 ? static_cast<int>(std::lround(cutoff_time_s_ / mean_cost_s_)) : 1;
  for (int b = cutoff_evals_ + 1; b <= std::min(total, time_evals); ++b) curve_.push_back(expected(b));
}

double RandomBaseline::expected_best(int evals) const {
  if (evals < 1) evals = 1;
  if (evals <= static_cast<int>(curve_.size())) return curve_[evals - 1];
  return curve_.back();  // past the curve: score() never asks there
}

Score score(const Landscape& l, const RandomBaseline& base, const SearchTrace& trace) {
  Score s;
  const double inf = std::numeric_limits<double>::infinity();
  auto standardised = [&](double baseline, double found) {
    double span = baseline - base.optimum();
    return span > 0 ? (baseline - found) / span : (found <= base.optimum() ? 1.0 : 0.0);
  };
  // By evaluations.
  double best = inf, sum = 0;
  int counted = 0;
  for (int b = 1; b <= base.cutoff_evals(); ++b) {
    if (b <= static_cast<int>(trace.size())) {
      const auto& ms = l.points()[trace[b - 1].point].ms;
      if (ms) best = std::min(best, *ms);
    }
    if (best == inf) continue;
    sum += standardised(base.expected_best(b), best);
    ++counted;
  }
  s.by_evals = counted ? sum / counted : 0;
  s.fraction_evals = best == inf ? 0 : base.optimum() / best;
  // By simulated time.
  const int steps = 100;
  best = inf, sum = 0, counted = 0;
  size_t next = 0;
  for (int k = 1; k <= steps; ++k) {
    double t = base.cutoff_time_s() * k / steps;
    for (; next < trace.size() && trace[next].elapsed_s <= t; ++next) {
      const auto& ms = l.points()[trace[next].point].ms;
      if (ms) best = std::min(best, *ms);
    }
    if (best == inf) continue;
    int evals = std::max(1, static_cast<int>(std::lround(t / base.mean_cost_s())));
    sum += standardised(base.expected_best(evals), best);
    ++counted;
  }
  s.by_time = counted ? sum / counted : 0;
  s.fraction_time = best == inf ? 0 : base.optimum() / best;
  return s;
}

}  // namespace mgpu::search
