#include "search/strategy.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "search/optuna_study.h"
#include "search/tpe_native.h"

namespace mgpu::search {
namespace {

using core::TuningConfig;

// Bookkeeping every strategy shares: which configs are told or pending, and the warm-start
// queue asked before the strategy's own picks.
class Tracked : public Strategy {
 public:
  explicit Tracked(const StrategyContext& ctx) : warm_(ctx.warm_start.begin(), ctx.warm_start.end()) {
    for (const TuningConfig& c : ctx.candidates) candidates_.insert(c.to_json());
  }
  void tell(const TuningConfig& c, std::optional<double> ms) override {
    std::string key = c.to_json();
    pending_.erase(key);
    told_[key] = ms;
    on_tell(c, ms);
  }

 protected:
  virtual void on_tell(const TuningConfig&, std::optional<double>) {}
  bool seen(const std::string& key) const { return told_.count(key) || pending_.count(key); }
  // Moves warm-start configs into `out` (up to n in all), each announced to `admit` first.
  void take_warm(std::vector<TuningConfig>& out, int n, const std::function<void(const TuningConfig&)>& admit = {}) {
    while (!warm_.empty() && static_cast<int>(out.size()) < n) {
      TuningConfig c = std::move(warm_.front());
      warm_.erase(warm_.begin());
      std::string key = c.to_json();
      if (!candidates_.count(key) || seen(key)) continue;
      if (admit) admit(c);
      mark_pending(key);
      out.push_back(std::move(c));
    }
  }
  void mark_pending(const std::string& key) { pending_.insert(key); }
  std::map<std::string, std::optional<double>> told_;
  std::set<std::string> pending_;
  std::vector<TuningConfig> warm_;
  std::set<std::string> candidates_;
};

// Walks a fixed order of the candidates.
class Ordered : public Tracked {
 public:
  Ordered(std::string name, const StrategyContext& ctx, std::vector<TuningConfig> order)
      : Tracked(ctx), name_(std::move(name)), order_(std::move(order)) {}
  std::string_view name() const override { return name_; }
  std::vector<TuningConfig> ask(int n) override {
    std::vector<TuningConfig> out;
    take_warm(out, n);
    for (; next_ < order_.size() && static_cast<int>(out.size()) < n; ++next_) {
      std::string key = order_[next_].to_json();
      if (seen(key)) continue;
      mark_pending(key);
      out.push_back(order_[next_]);
    }
    return out;
  }

 private:
  std::string name_;
  std::vector<TuningConfig> order_;
  size_t next_ = 0;
};

class ModelGuided : public Tracked {
 public:
  ModelGuided(StrategyContext ctx) : Tracked(ctx), ctx_(std::move(ctx)) {
    for (size_t i = 0; i < ctx_.candidates.size(); ++i) predicted_.push_back(ctx_.model(ctx_.candidates[i]));
    ranking_ = model_ranking(ctx_);
  }
  std::string_view name() const override { return "model"; }
  std::vector<TuningConfig> ask(int n) override {
    std::vector<TuningConfig> out;
    take_warm(out, n);
    auto take = [&](size_t i) {
      std::string key = ctx_.candidates[i].to_json();
      if (seen(key)) return;
      mark_pending(key);
      out.push_back(ctx_.candidates[i]);
    };
    while (!front_.empty() && static_cast<int>(out.size()) < n) {
      take(front_.front());
      front_.erase(front_.begin());
    }
    for (; next_ < ranking_.size() && static_cast<int>(out.size()) < n; ++next_) take(ranking_[next_]);
    return out;
  }

 private:
  void on_tell(const TuningConfig& c, std::optional<double> ms) override {
    if (!ms || *ms >= best_) return;
    best_ = *ms;
    // Neighbours of the new best: configs differing in exactly one parameter, model-ranked.
    std::vector<size_t> near;
    for (size_t i = 0; i < ctx_.candidates.size(); ++i) {
      int diff = 0;
      for (const auto& [k, v] : ctx_.candidates[i].values()) diff += c.values().at(k) != v;
      if (diff == 1 && !seen(ctx_.candidates[i].to_json())) near.push_back(i);
    }
    std::stable_sort(near.begin(), near.end(), [&](size_t a, size_t b) { return predicted_[a] < predicted_[b]; });
    front_.insert(front_.begin(), near.begin(), near.end());
  }

  StrategyContext ctx_;
  std::vector<double> predicted_;
  std::vector<size_t> ranking_, front_;
  size_t next_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
};

class OptunaStrategy : public Tracked {
 public:
  OptunaStrategy(std::string sampler, StrategyContext ctx)
      : Tracked(ctx), sampler_(std::move(sampler)), ctx_(std::move(ctx)), study_(sampler_, ctx_.seed), rng_(ctx_.seed) {
    // Optuna sees each parameter as an index into its domain (strings included).
    for (const core::Param& p : ctx_.space.params()) {
      CategoricalParam cp{p.name, {}};
      for (size_t i = 0; i < p.domain.size(); ++i) cp.choices.push_back(static_cast<std::int64_t>(i));
      params_.push_back(cp);
    }
    for (const TuningConfig& c : ctx_.candidates) {
      keys_.push_back(c.to_json());
      std::vector<std::int64_t> idx;
      for (const auto& [name, i] : to_indices(c)) idx.push_back(i);
      coded_.push_back(std::move(idx));
    }
    valid_.insert(keys_.begin(), keys_.end());
    by_model_ = model_ranking(ctx_);  // the warm phase takes the model's best first (as tpe-native does)
  }
  std::string_view name() const override { return sampler_; }

  std::vector<TuningConfig> ask(int n) override {
    std::vector<TuningConfig> out;
    take_warm(out, n, [&](const TuningConfig& c) {  // an enqueued trial: Optuna's own warm start
      study_.enqueue(to_indices(c), params_);
      number_[c.to_json()] = study_.ask(params_).number;
    });
    // A warm phase over the candidates (valid by construction), told to the study: the
    // model's best where there is a cost model, else random picks. Optuna's own startup draws
    // from the Cartesian product, more than half of it invalid on the measured landscapes, and
    // repairs each draw to its nearest candidate, which skews it.
    if (asked_ + static_cast<int>(out.size()) < kRandomWarm)
      take_open(out, std::min(n, kRandomWarm - asked_), by_model_.empty() ? random_open() : by_model_);
    // CMA-ES's first mean is the middle of every domain, a poor start on heavy-tailed
    // landscapes (convolution on MI250X scored -0.39 from there, below random search): after
    // the warm phase, CMA-ES starts centred on its best.
    if (sampler_ == "cmaes" && !restarted_ && asked_ >= kRandomWarm && best_ && !sampler_failed_ && number_.empty()) {
      study_.restart_cmaes_at(to_indices(*best_), params_, kCmaesSigma0);
      restarted_ = true;
    }
    int attempts = 0;
    const int max_attempts = 8 * n + 16;  // then fall back to random picks: asks get slower as trials pile up
    while (!sampler_failed_ && static_cast<int>(out.size()) < n && attempts++ < max_attempts) {
      AskedTrial t;
      try {
        t = study_.ask(params_);
      } catch (const SamplerFailed&) {
        sampler_failed_ = true;  // the rest of the search picks at random
        break;
      }
      TuningConfig c = to_config(t.values);
      std::string key = c.to_json();
      if (!valid_.count(key) || seen(key)) {
        // Not a candidate (an invalid config, or one outside a recorded space), or one already
        // measured or pending: measure the nearest unmeasured candidate instead and tell the
        // sampler its value for the point it proposed -- a repair that keeps each evaluation
        // one ask, where rejecting it (or answering it again from the record) left the sampler
        // proposing the same points again and again, each ask slower than the last.
        std::optional<size_t> near = nearest_open(t.values);
        if (!near) {
          study_.tell_failed(t.number);
          break;
        }
        number_[keys_[*near]] = t.number;
        mark_pending(keys_[*near]);
        out.push_back(ctx_.candidates[*near]);
      } else {
        number_[key] = t.number;
        mark_pending(key);
        out.push_back(c);
      }
    }
    // The sampler keeps proposing known or invalid points: pick unmeasured candidates at
    // random, and tell the study about them so its model stays complete.
    if (static_cast<int>(out.size()) < n) take_open(out, n, random_open());
    asked_ += static_cast<int>(out.size());
    return out;
  }

 private:
  std::vector<size_t> random_open() {  // the unmeasured candidates, shuffled
    std::vector<size_t> open;
    for (size_t i = 0; i < keys_.size(); ++i)
      if (!seen(keys_[i])) open.push_back(i);
    std::shuffle(open.begin(), open.end(), rng_);
    return open;
  }
  // The unmeasured candidates of `order`, in that order, until `out` holds n, each told to the
  // study as an enqueued trial so that its model stays complete.
  void take_open(std::vector<TuningConfig>& out, int n, const std::vector<size_t>& order) {
    for (size_t i : order) {
      if (static_cast<int>(out.size()) >= n) break;
      if (seen(keys_[i])) continue;
      const TuningConfig& c = ctx_.candidates[i];
      if (!sampler_failed_) {
        try {
          study_.enqueue(to_indices(c), params_);
          number_[keys_[i]] = study_.ask(params_).number;
        } catch (const SamplerFailed&) {
          sampler_failed_ = true;
        }
      }
      mark_pending(keys_[i]);
      out.push_back(c);
    }
  }
  void on_tell(const TuningConfig& c, std::optional<double> ms) override {
    if (ms && (!best_ms_ || *ms < *best_ms_)) best_ms_ = *ms, best_ = c;
    auto it = number_.find(c.to_json());
    if (it == number_.end()) return;  // told from the record (resume): nothing pending
    if (sampler_failed_) return;
    if (ms) study_.tell(it->second, *ms);
    else study_.tell_failed(it->second);
    number_.erase(it);
  }
  // The unmeasured candidate closest to a proposal (L1 over domain indices; the first of ties).
  std::optional<size_t> nearest_open(const std::map<std::string, std::int64_t>& proposal) const {
    std::vector<std::int64_t> p;
    for (const auto& [name, i] : proposal) p.push_back(i);
    std::optional<size_t> best;
    std::int64_t best_d = 0;
    for (size_t i = 0; i < coded_.size(); ++i) {
      std::int64_t d = 0;
      for (size_t k = 0; k < p.size(); ++k) d += std::abs(coded_[i][k] - p[k]);
      if ((!best || d < best_d) && !seen(keys_[i])) best = i, best_d = d;
    }
    return best;
  }
  TuningConfig to_config(const std::map<std::string, std::int64_t>& idx) const {
    TuningConfig c;
    for (const core::Param& p : ctx_.space.params()) c.set(p.name, p.domain.at(static_cast<size_t>(idx.at(p.name))));
    return c;
  }
  std::map<std::string, std::int64_t> to_indices(const TuningConfig& c) const {
    std::map<std::string, std::int64_t> out;
    for (const core::Param& p : ctx_.space.params())
      out[p.name] = std::find(p.domain.begin(), p.domain.end(), c.values().at(p.name)) - p.domain.begin();
    return out;
  }

  std::string sampler_;
  StrategyContext ctx_;
  OptunaStudy study_;
  std::vector<CategoricalParam> params_;
  std::vector<std::string> keys_;  // the candidates' JSON, in order
  std::vector<std::vector<std::int64_t>> coded_;  // the candidates' domain indices, by parameter name
  std::set<std::string> valid_;
  bool sampler_failed_ = false;   // Optuna raised: random picks from then on
  int asked_ = 0;                 // configs handed out so far
  std::vector<size_t> by_model_;  // candidates by predicted time, when there is a cost model
  std::optional<TuningConfig> best_;  // the fastest told so far
  std::optional<double> best_ms_;
  bool restarted_ = false;        // CMA-ES recentred on best_ after its random warm phase
  // Chosen on convolution on MI250X, 100 seeds (mean score): warm 5/10/15 with sigma0 0.5, 1,
  // 2 (domain indices) gave -0.64..-0.06, -0.04..0.16, 0.00..0.11; sigma0 3 and 4 after 10
  // gave 0.17 and 0.18, no better than 2 within the noise.
  static constexpr int kRandomWarm = 10;
  static constexpr double kCmaesSigma0 = 2.0;
  std::map<std::string, int> number_;  // pending config -> Optuna trial number
  std::mt19937_64 rng_;
};

}  // namespace

std::vector<size_t> model_ranking(const StrategyContext& ctx) {
  if (!ctx.model) return {};
  std::vector<double> predicted;
  for (const TuningConfig& c : ctx.candidates) predicted.push_back(ctx.model(c));
  std::vector<size_t> order(predicted.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
  return order;
}

std::vector<std::string> strategy_names() { return {"exhaustive", "random", "tpe", "tpe-native", "cmaes", "model"}; }

std::unique_ptr<Strategy> make_strategy(std::string_view name, StrategyContext ctx) {
  if (name == "exhaustive") return std::make_unique<Ordered>("exhaustive", ctx, ctx.candidates);
  if (name == "random") {
    std::vector<TuningConfig> order = ctx.candidates;
    std::mt19937_64 rng(ctx.seed);
    std::shuffle(order.begin(), order.end(), rng);
    return std::make_unique<Ordered>("random", ctx, std::move(order));
  }
  if (name == "tpe-native") return make_native_tpe(std::move(ctx));
  if (name == "tpe" || name == "cmaes") return std::make_unique<OptunaStrategy>(std::string(name), std::move(ctx));
  if (name == "model") {
    if (!ctx.model) throw core::Error(core::ErrorKind::InvalidInput, "the model strategy needs a cost model");
    return std::make_unique<ModelGuided>(std::move(ctx));
  }
  throw core::Error(core::ErrorKind::InvalidInput,
                    fmt::format("unknown strategy '{}': choose exhaustive, random, tpe, tpe-native, cmaes or model", name));
}

}  // namespace mgpu::search
