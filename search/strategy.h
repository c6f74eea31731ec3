// Search strategies behind one ask/tell interface. A strategy searches a finite candidate
// set -- the template's valid configs -- and never proposes a config twice: not one already
// told, not one still pending. Contract: ask(n) returns up to n configs (fewer only when the
// candidates are exhausted); tell() reports a config's time in ms (nullopt: the trial failed)
// and may come in any order. Strategies:
//   exhaustive  every candidate, in the space's enumeration order
//   random      every candidate, in a seeded random order
//   tpe, cmaes  Optuna's samplers through the embedded interpreter (seeded), after a warm
//               phase of 10 candidates told to the study (the model's best where there is a
//               cost model, else random ones); CMA-ES then starts centred on the best of them. A suggestion
//               outside the candidates, or already measured or pending, is repaired: the
//               nearest unmeasured candidate (L1 over domain indices) is measured and its
//               value told for the suggestion, so each evaluation costs one ask; should the
//               sampler break down (Optuna raises), the rest of the search picks at random
//   tpe-native  TPE written natively over the candidates (search/tpe_native.h): microseconds
//               a step instead of Optuna's milliseconds, and never asks an invalid config
//   model       candidates ranked by the cost model, best first; each new best measured
//               config pulls its neighbours (one parameter changed) to the front
// Warm start (every strategy): StrategyContext::warm_start configs -- say the winners of the
// nearest shapes already tuned -- are asked before anything the strategy picks itself, in
// their order (Optuna: as enqueued trials, so its model learns from them); ones that are not
// candidates are skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tuning_config.h"

namespace mgpu::search {

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<core::TuningConfig> ask(int n) = 0;
  virtual void tell(const core::TuningConfig& config, std::optional<double> ms) = 0;
};

struct StrategyContext {
  core::ParamSpace space;
  std::vector<core::TuningConfig> candidates;           // the valid configs
  std::uint64_t seed = 0;
  std::function<double(const core::TuningConfig&)> model;  // predicted ms (the model strategy)
  std::vector<core::TuningConfig> warm_start;           // asked first, in this order
};

std::vector<std::string> strategy_names();
// The candidates' indices, best predicted first (ties in candidate order); empty without a model.
std::vector<size_t> model_ranking(const StrategyContext& context);
// Error{InvalidInput} for an unknown name, or an Optuna strategy without python3-optuna.
std::unique_ptr<Strategy> make_strategy(std::string_view name, StrategyContext context);

}  // namespace mgpu::search
