// How a measurement becomes a stored trial, shared by the tuning loop and the nightly suite:
// the problem, template and environment records results/ keys trials by, and the trial row
// itself. Contract: timing fields are stored only for ok measurements; the source ("cuda",
// "model", "replay") and the timer travel with the numbers.
#pragma once

#include <cstdint>

#include "core/arch.h"
#include "core/device_query.h"
#include "core/tuning_config.h"
#include "harness/measure/measurement.h"
#include "kernels/matmul_template.h"
#include "kernels/op_template.h"
#include "results/store.h"

namespace mgpu::harness {

results::ProblemRecord problem_record(const kernels::MatmulProblem& p);
// Any op's problem (kernels/op_template.h): its fields as a JSON object and its flops; m, n, k
// and layout stay 0 and "".
results::ProblemRecord problem_record(const kernels::Problem& p);
// Its inverse: the problem a stored row was run at (dtype and layout names as problem_record
// writes them; Error{InvalidInput} for others).
kernels::MatmulProblem matmul_problem(const results::ProblemRecord& r);
// The template version: name, source hash and the backend that compiles it for `arch`.
results::TemplateId template_id(const kernels::MatmulTemplate& t, const core::ArchSpec& arch);
results::TemplateId template_id(const kernels::OpTemplate& t);
// A GPU as found by the driver (name, compute capability, SMs, driver and CUDA versions, clock).
results::Environment gpu_environment(const core::GpuInfo& gpu, const core::DeviceReport& report,
                                     const core::ArchSpec& arch);
// Predictions are stored against "model:<the arch's default device>".
results::Environment model_environment(const core::ArchSpec& arch);
results::TrialRecord trial_record(std::int64_t run, const results::TemplateId& tmpl, const kernels::MatmulProblem& p,
                                  const core::TuningConfig& c, const results::Environment& env, const Measurement& m);
results::TrialRecord trial_record(std::int64_t run, const results::TemplateId& tmpl, const results::ProblemRecord& p,
                                  const core::TuningConfig& c, const results::Environment& env, const Measurement& m);

}  // namespace mgpu::harness
