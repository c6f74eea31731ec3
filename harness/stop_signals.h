// Ctrl-C (SIGINT), and what Slurm and CI send at a time limit (SIGTERM) or when the terminal
// goes (SIGHUP): a long command installs these handlers, lets the work under way finish and
// commit, and exits 128 + the signal's number (130, 143, 129). Shared by `matmul` and
// `campaign run-task`.
#pragma once

#include <atomic>

namespace mgpu::harness {

void install_stop_handlers();
const std::atomic<bool>& stop_requested();
int stop_exit_code();  // 128 + the signal received (130 when none)

}  // namespace mgpu::harness
