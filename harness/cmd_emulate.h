// mgpu-tune emulate: run one kernel on the virtual device (core/emu) from its PTX, or from an
// MLIR module compiled through the MGPU backend, with a JSON launch description, under one or
// more seeded schedules, and print what the checkers found.
#pragma once

#include <CLI/CLI.hpp>

namespace mgpu::harness {

void add_emulate_command(CLI::App& app);

}  // namespace mgpu::harness
