// TPE (tree-structured Parzen estimator, Bergstra et al. 2011, as Optuna's TPESampler does it for
// categorical parameters) written natively over the candidate set, so a step costs microseconds
// instead of Optuna's tens to hundreds of milliseconds (its pure-Python pass over every past
// trial for every parameter). Contract: as Strategy (search/strategy.h); the first
// `startup` picks are the best predicted candidates when the context has a cost model (a
// model-guided warm phase), uniform among unmeasured candidates otherwise; after that, measured configs are
// split into the best ceil(10%) (at most 25) and the rest -- failed configs join the rest, so
// regions that fail to compile or run are avoided -- and each parameter gets a smoothed
// categorical density for each group (l good, g bad, prior weight 1 over the domain). Each pick
// draws `ei_candidates` unmeasured candidates with probability proportional to l(x) and takes the
// one with the highest l(x)/g(x). Only candidates are ever drawn: invalid configs cost nothing
// (constraint-aware by construction). Same seed and same tells give the same asks.
#pragma once

#include <memory>

#include "search/strategy.h"

namespace mgpu::search {

std::unique_ptr<Strategy> make_native_tpe(StrategyContext context, int startup = 10, int ei_candidates = 24);

}  // namespace mgpu::search
