// `mgpu-tune matmul --arch ARCH [problem] [--strategy S] [--trials N] [--time-budget SEC]
// [--db FILE] [--device auto|cuda|model|replay:DB] [--seed S] [--top K] [--json]`: the main
// job. Tunes the matmul template for one problem, committing every trial to the database, and
// prints the best configs. Ctrl-C stops after the trial in flight is committed (exit 130);
// running the same command again resumes where it stopped.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_matmul_command(CLI::App& app);

}  // namespace mgpu::harness
