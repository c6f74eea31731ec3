// A matmul problem from its key, as MatmulProblem::key() writes it
// ("m4096_n4096_k4096_bf16_bf16_kn"): the one reader of keys that name no op (imported rows, a
// kernel pack's entries). Throws Error{InvalidInput}: a text of another form says what a key
// reads like; a size, dtype or layout out of range says which.
#pragma once

#include <string>

#include "kernels/matmul_problem.h"

namespace mgpu::harness {

kernels::MatmulProblem matmul_problem_from_key(const std::string& key);

}  // namespace mgpu::harness
