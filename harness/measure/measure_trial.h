// Measuring one trial in this process: validate, build, compile (through the cache), then
// predict ("model") or time on the GPU ("cuda"). Contract: never throws for a bad config or a
// failed stage -- the Measurement's status says what happened (invalid_config,
// compile_error, ...); throws Error{InvalidInput} only for a malformed request (unknown arch
// or measurer). The CUDA measurer is not built yet: asking for it returns launch_error with a
// message saying so.
#pragma once

#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"

namespace mgpu::harness {

Measurement measure_trial(const TrialRequest& request);

}  // namespace mgpu::harness
