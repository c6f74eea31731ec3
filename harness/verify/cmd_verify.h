// `mgpu-tune verify matmul`: prove configs on the virtual device (harness/verify/verifier.h)
// and record every outcome; exit 0 when all are verified, 1 when any failed.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_verify_command(CLI::App& app);

}  // namespace mgpu::harness
