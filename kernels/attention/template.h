// The attention template behind kernels/op_template.h: the sm_90a FlashAttention forward kernel
// (sm90_kernel.h), its problem as command-line flags and a key, its space (Pallas:MGPU's names:
// block_q, block_kv, max_concurrent_steps), the cost model, the problem classes a config is
// proven at, and its launch preparation (device_run.h). Contract: attention_template(arch)
// returns the template for sm_90a and throws Error{Unavailable} for any other target.
#pragma once

#include "core/arch.h"
#include "core/tuning_config.h"
#include "kernels/attention/attention_problem.h"
#include "kernels/attention/sm90_kernel.h"
#include "kernels/op_template.h"

namespace mgpu::kernels::attention {

const OpTemplate& attention_template(const core::ArchSpec& arch);

// The typed forms of the generic ones (throw Error{InvalidInput} on a Problem of another op or a
// config outside the space).
AttentionProblem attention_problem(const Problem& p);
Problem generic_problem(const AttentionProblem& p);
AttentionConfig attention_config(const core::TuningConfig& c);

}  // namespace mgpu::kernels::attention
