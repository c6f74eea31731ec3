#include "search/tpe_native.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace mgpu::search {
namespace {

using core::TuningConfig;

class NativeTpe : public Strategy {
 public:
  NativeTpe(StrategyContext ctx, int startup, int ei)
      : ctx_(std::move(ctx)), startup_(startup), ei_(ei), rng_(ctx_.seed) {
    const auto& params = ctx_.space.params();
    for (size_t i = 0; i < ctx_.candidates.size(); ++i) {
      std::vector<int> idx;
      for (const core::Param& p : params) {
        const core::ParamValue& v = ctx_.candidates[i].values().at(p.name);
        idx.push_back(static_cast<int>(std::find(p.domain.begin(), p.domain.end(), v) - p.domain.begin()));
      }
      coded_.push_back(std::move(idx));
      index_[ctx_.candidates[i].to_json()] = i;
    }
    state_.assign(ctx_.candidates.size(), Open);
    by_model_ = model_ranking(ctx_);
  }
  std::string_view name() const override { return "tpe-native"; }

  std::vector<TuningConfig> ask(int n) override {
    std::vector<TuningConfig> out;
    while (!ctx_.warm_start.empty() && static_cast<int>(out.size()) < n) {
      auto it = index_.find(ctx_.warm_start.front().to_json());
      ctx_.warm_start.erase(ctx_.warm_start.begin());
      if (it != index_.end() && state_[it->second] == Open) take(it->second, out);
    }
    while (static_cast<int>(out.size()) < n) {
      std::vector<size_t> open;
      for (size_t i = 0; i < state_.size(); ++i)
        if (state_[i] == Open) open.push_back(i);
      if (open.empty()) break;
      if (static_cast<int>(good_.size() + rest_.size()) < startup_ || good_.empty()) {
        if (!by_model_.empty()) {  // model-guided warm phase: the best predicted first
          while (state_[by_model_[next_model_]] != Open) ++next_model_;
          take(by_model_[next_model_], out);
          continue;
        }
        take(open[std::uniform_int_distribution<size_t>(0, open.size() - 1)(rng_)], out);
        continue;
      }
      take(pick(open), out);
    }
    return out;
  }

  void tell(const TuningConfig& c, std::optional<double> ms) override {
    auto it = index_.find(c.to_json());
    if (it == index_.end() || state_[it->second] == Done) return;
    state_[it->second] = Done;
    if (ms) measured_.push_back({*ms, it->second});
    else failed_.push_back(it->second);
    split();
  }

 private:
  enum State : char { Open, Pending, Done };

  void take(size_t i, std::vector<TuningConfig>& out) {
    state_[i] = Pending;
    out.push_back(ctx_.candidates[i]);
  }

  // Optuna's default gamma: the best ceil(10%) of the measured, at most 25, are "good".
  void split() {
    std::sort(measured_.begin(), measured_.end());
    size_t n_good = std::min<size_t>(25, static_cast<size_t>(std::ceil(0.1 * measured_.size())));
    good_.clear();
    rest_ = failed_;
    for (size_t k = 0; k < measured_.size(); ++k) (k < n_good ? good_ : rest_).push_back(measured_[k].second);
  }

  // log density per parameter value for a group of observations, smoothed by a uniform prior.
  std::vector<std::vector<double>> log_density(const std::vector<size_t>& group) const {
    const auto& params = ctx_.space.params();
    std::vector<std::vector<double>> out(params.size());
    for (size_t p = 0; p < params.size(); ++p) {
      const double d = static_cast<double>(params[p].domain.size());
      std::vector<double> count(params[p].domain.size(), 1.0 / d);  // prior weight 1 in all
      for (size_t i : group) count[coded_[i][p]] += 1;
      for (double& c : count) c = std::log(c / (1.0 + group.size()));
      out[p] = std::move(count);
    }
    return out;
  }

  size_t pick(const std::vector<size_t>& open) {
    auto l = log_density(good_), g = log_density(rest_);
    std::vector<double> log_l(open.size()), weight(open.size());
    double top = -INFINITY;
    for (size_t k = 0; k < open.size(); ++k) {
      double s = 0;
      for (size_t p = 0; p < l.size(); ++p) s += l[p][coded_[open[k]][p]];
      log_l[k] = s;
      top = std::max(top, s);
    }
    for (size_t k = 0; k < open.size(); ++k) weight[k] = std::exp(log_l[k] - top);
    std::discrete_distribution<size_t> draw(weight.begin(), weight.end());
    size_t best = 0;
    double best_ratio = -INFINITY;
    for (int e = 0; e < ei_; ++e) {
      size_t k = draw(rng_);
      double lg = 0;
      for (size_t p = 0; p < g.size(); ++p) lg += g[p][coded_[open[k]][p]];
      double ratio = log_l[k] - lg;
      if (ratio > best_ratio) best_ratio = ratio, best = k;
    }
    return open[best];
  }

  StrategyContext ctx_;
  int startup_, ei_;
  std::mt19937_64 rng_;
  std::vector<std::vector<int>> coded_;  // candidate -> domain index per parameter
  std::map<std::string, size_t> index_;
  std::vector<State> state_;
  std::vector<size_t> by_model_;  // candidates by predicted time, when there is a cost model
  size_t next_model_ = 0;
  std::vector<std::pair<double, size_t>> measured_;
  std::vector<size_t> failed_, good_, rest_;
};

}  // namespace

std::unique_ptr<Strategy> make_native_tpe(StrategyContext context, int startup, int ei_candidates) {
  return std::make_unique<NativeTpe>(std::move(context), startup, ei_candidates);
}

}  // namespace mgpu::search
