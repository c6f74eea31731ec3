// `mgpu-tune compile matmul --arch ARCH [problem] (--config JSON | --all) [--emit-dir DIR]
// [--json]`: builds the template's kernels and compiles them in parallel, reporting per config
// its resources, compile time and any error. Configs that differ only in run-time parameters
// share one kernel and one compile.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_compile_matmul_subcommand(CLI::App& compile);

}  // namespace mgpu::harness
