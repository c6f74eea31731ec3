// `mgpu-tune bench <op>` for an op of the registry (kernels/op_registry.h): one config, checked on
// the GPU against the op's float64 reference at its verification problems, then timed --repeat
// times under the strict stopping rule (cold L2, CUPTI or events). Bad input is exit 2 before a
// GPU is looked for; no GPU of the arch (or the virtual device, which has no clock) is exit 3.
#pragma once

#include <CLI/App.hpp>

#include "kernels/op_registry.h"

namespace mgpu::harness {

void add_op_bench_subcommand(CLI::App& bench, const kernels::OpEntry& e);

}  // namespace mgpu::harness
