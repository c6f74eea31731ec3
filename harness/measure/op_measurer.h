// Measuring one trial of an op that speaks kernels/op_template.h: validity, the compile
// (through the compile cache), then by request.measurer --
//  - model: the op's cost model for the arch's default device;
//  - emulate: the virtual device under request.seeds schedules (schedule_seed()), each launch
//    checked by the checkers and against the op's CPU reference within its tolerance, and every
//    schedule's output bit for bit the first one's; never a time;
//  - cuda: the kernel checked on the GPU against the reference at each of the op's verification
//    problems (the reference of a large problem would take the CPU hours), then timed at the
//    trial's problem with the stopping rule, cold L2, CUPTI or events (time_kernel()).
// Contract: as measure_trial(): every outcome is a Measurement; a fault loses the context.
#pragma once

#include "harness/measure/measurement.h"
#include "harness/measure/trial_request.h"
#include "kernels/op_template.h"

namespace mgpu::harness {

Measurement measure_op_trial(const TrialRequest& request);
// The same with the template given (request.op is not looked up): what the checker tests use
// to run a faulty twin of a registered template.
Measurement measure_op_trial(const TrialRequest& request, const kernels::OpTemplate& t);

}  // namespace mgpu::harness
