// One matmul config of the Hopper template run on the CUDA device the driver offers (a GPU, or
// the virtual device under MGPU_CUDA_DRIVER) through kernels/matmul_run's PreparedMatmul (inputs
// drawn with `seed`, C poisoned with NaN first); the result's relative Frobenius error against
// float64 (infinity when an element is NaN). On the virtual device, any checker finding but a note throws
// std::runtime_error naming it. Shared by the gpu tests and the emulator benchmark.
#pragma once

#include <string>

#include "core/built_kernel.h"
#include "kernels/matmul_problem.h"

namespace mgpu::testing {

// `launch_seconds`, when given, receives the wall time of the launch and its synchronize.
double matmul_error_on_device(const kernels::MatmulProblem& p, const std::string& config_json, int sm_count, unsigned seed,
                              double* launch_seconds = nullptr);
// The same for a kernel built elsewhere (e.g. without the validity rules) from `config_json`.
double matmul_error_of_kernel(const kernels::MatmulProblem& p, const core::BuiltKernel& k, const std::string& config_json,
                              int sm_count, unsigned seed, double* launch_seconds = nullptr);

}  // namespace mgpu::testing
