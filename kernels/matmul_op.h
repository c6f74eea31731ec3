// The matmul templates (kernels/matmul_template.h) behind the op face (kernels/op_template.h),
// so the op-generic layers -- the prover, the trial measurer, the op commands -- can serve
// matmul as they serve attention. Contract: matmul_op(arch) is the face of
// matmul_template(arch) (same name, source hash and space; throws Error{Unavailable} where that
// does); a Problem's key is MatmulProblem::key() and its fields are m, n, k, dtype, out_dtype and
// layout; verification_problems() are the matmul verifier's: the config's problem class at the
// target on `sm_count` SMs, proven at the cheapest problem of that class (its proxy, with the
// proxy's own SM count) -- or, where the class has none small enough, said unrunnable;
// prepare() is kernels/matmul_run's launch, compared with its float64 reference by relative
// Frobenius error within the output dtype's threshold.
#pragma once

#include "core/arch.h"
#include "kernels/matmul_problem.h"
#include "kernels/op_suites.h"
#include "kernels/op_template.h"

namespace mgpu::kernels {

const OpTemplate& matmul_op(const core::ArchSpec& arch);

// The named shape suites (kernels/matmul_suites.h) as rows of the face's problem flags, bf16.
std::vector<OpSuite> matmul_op_suites();

// A matmul problem as the op face carries it, and back (throws Error{InvalidInput} for a
// problem of another op).
Problem generic_problem(const MatmulProblem& p);
MatmulProblem matmul_problem_of(const Problem& p);

}  // namespace mgpu::kernels
