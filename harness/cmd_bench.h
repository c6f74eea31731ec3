// `mgpu-tune bench matmul --arch ARCH [problem] [--config JSON] [--repeat N] [--json]`: one
// config measured N times with the strict stopping rule (the spread of the medians says how far
// the timings can be trusted), next to cuBLASLt on the same inputs and the same cold-L2 timing:
// TFLOP/s and % of cuBLAS. Needs a GPU of the arch.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_bench_command(CLI::App& app);

}  // namespace mgpu::harness
