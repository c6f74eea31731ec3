// A sample of a template's configs that reaches every kernel family (verify --sample, space
// --lints --sample). Contract: sample_configs() returns at most n of `all`: first, greedily,
// the config covering most parameter values not seen yet, until every value of every
// parameter appears (as far as n allows: a parameter with as many values left as picks left
// comes first; values n cannot reach are named on stderr, never left out silently); then
// random ones, seeded, so the same seed gives the same sample.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tuning_config.h"

namespace mgpu::harness {

std::vector<core::TuningConfig> sample_configs(std::vector<core::TuningConfig> all, int n, std::uint64_t seed);

}  // namespace mgpu::harness
