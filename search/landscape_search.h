// Replaying a search on a landscape: a strategy asks one config at a time and is answered with
// the recorded objective, as Kernel Tuner's simulation mode does. Contract: search_landscape()
// stops after `max_evals` evaluations, once the simulated time (the recorded cost_s of each
// evaluated point, summed) reaches `max_time_s` (0: no time limit), or when the strategy has
// nothing left; each evaluation is a point of the landscape, never one twice. The same
// landscape, strategy name and seed give the same trace. trace_of() turns a config sequence
// found elsewhere (another tuner's log) into a trace: repeats and configs outside the
// landscape are skipped, as they cost that tuner no measurement here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "search/landscape.h"
#include "search/strategy.h"

namespace mgpu::search {

struct Evaluation {
  std::size_t point = 0;   // index into Landscape::points()
  double elapsed_s = 0;    // simulated time when this evaluation finished
};
using SearchTrace = std::vector<Evaluation>;

// The context a strategy searches a landscape with: its space and points (the model strategy
// gets no cost model here: a landscape has none).
StrategyContext landscape_context(const Landscape& landscape, std::uint64_t seed);

SearchTrace search_landscape(const Landscape& landscape, Strategy& strategy, int max_evals, double max_time_s = 0);
SearchTrace trace_of(const Landscape& landscape, const std::vector<core::TuningConfig>& sequence);

}  // namespace mgpu::search
