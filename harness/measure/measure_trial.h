// Measuring one trial in this process: validate, build, compile (through the cache), then
// predict ("model") or time on the GPU ("cuda"). Contract: never throws for a bad config or a
// failed stage -- the Measurement's status says what happened (invalid_config,
// compile_error, ...); throws Error{InvalidInput} only for a malformed request (unknown arch
// or measurer). "cuda" runs measure_on_gpu() in this process: use it through a worker
// process (worker.h) so that a faulting kernel cannot take the caller down.
#pragma once

#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"

namespace mgpu::harness {

Measurement measure_trial(const TrialRequest& request);

}  // namespace mgpu::harness
