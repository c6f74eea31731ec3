// The report's verification section (issue 17), gathered from a results database's
// virtual-device trials (source 'emulate') as JSON: pass/fail counts in total and per template,
// parameter and value, and every failure with its report (config, problem and problem class,
// kernel hash, status, the checker's message). A trial the machine failed (env_error) is
// counted as inconclusive, neither pass nor fail, as Store::verification() does. Values keep
// their JSON type; their order is the renderer's.
#pragma once

#include <nlohmann/json.hpp>

#include "results/store.h"

namespace mgpu::harness {

nlohmann::json verification_summary(results::Store& store);

}  // namespace mgpu::harness
