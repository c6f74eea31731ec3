// `mgpu-tune matmul --arch ARCH [problem]`: the main job, tuning a matmul for one target.
// Until the matmul template lands (issue #4), it validates its input, says what it will tune,
// and fails (exit 1) without producing any result.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_matmul_command(CLI::App& app);

}  // namespace mgpu::harness
