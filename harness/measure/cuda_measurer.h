// Timing and verifying a compiled matmul kernel on the GPU. Contract: inputs are seeded
// random values (never zeros), the same for every config of a problem; when verifying, C is
// poisoned (NaN) first and compared with cuBLASLt's f32 result by relative Frobenius error
// (NaN never passes); samples are kernel durations -- the GPU's own timestamps through CUPTI
// activity records, or CUDA events around the launch -- each after a write of a buffer twice
// the L2 size (cold L2), after two warm-up launches, taken until the stopping rule is met; SM clock and throttle reasons are read through NVML before and after. Returns ok,
// wrong_result, launch_error or fault (the context is lost: the caller must not reuse this
// process for CUDA work).
#pragma once

#include <string>
#include <string_view>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/built_kernel.h"
#include "core/cuda_context.h"
#include "harness/measure/stopping_rule.h"
#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"
#include "kernels/matmul_run/device_run.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

Measurement measure_on_gpu(const TrialRequest& request, const kernels::MatmulTemplate& t,
                           const core::BuiltKernel& kernel, const std::string& cubin);

enum class Timer { Cupti, Events };
std::string_view to_string(Timer t);
// "auto": CUPTI when it opens and agrees to trace kernels, else events; "cupti" throws
// Error{Unavailable} saying why it cannot be had; anything else is Error{InvalidInput}.
Timer choose_timer(std::string_view choice);
void check_timer_choice(std::string_view choice);  // the names alone, no GPU needed

// Records the verification error in `m` and fails it (wrong_result) above the dtype's threshold;
// `reference` names what the result was compared with. Returns whether it passed. (The inputs,
// the reference and the thresholds are kernels/matmul_run/device_run.h's.)
bool judge_verification(Measurement& m, double rel, kernels::DType out, std::string_view reference);

// The timing loop itself, for any launch: after two warm-up launches, each sample writes
// `flush` (twice the L2) and times one launch -- with CUPTI, the summed GPU durations of the
// kernels it ran; with events, the time between events recorded around it -- until `rule`
// says stop. Returns the collector (samples, convergence). Used for our kernels and for
// cuBLASLt alike.
SampleCollector time_launches(const std::function<void()>& launch, const StoppingRule& rule, core::DeviceBuffer& flush,
                              Timer timer);

// time_launches() with a timer chosen from `timer_choice` ("auto", "cupti", "events"), into
// m's samples and statistics, with the SM clock and throttling read before and after.
void time_kernel(Measurement& m, const std::function<void()>& launch, const StoppingRule& rule, core::DeviceBuffer& flush,
                 std::string_view timer_choice);

}  // namespace mgpu::harness
