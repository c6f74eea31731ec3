// `mgpu-tune space matmul --arch ARCH [problem] [--json]`: a template's parameters and their
// domains, how many configs are valid for the problem, and why the others are not.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_space_command(CLI::App& app);

}  // namespace mgpu::harness
