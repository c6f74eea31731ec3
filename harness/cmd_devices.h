// `mgpu-tune devices [--json]`: the GPUs this machine can measure on. Without a driver or GPU
// it prints one line saying so and exits 0 (that is an answer, not a failure).
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_devices_command(CLI::App& app);

}  // namespace mgpu::harness
