// `mgpu-tune worker`: the measuring side of crash containment (harness/measure/worker.h).
// Reads one TrialRequest per line on stdin, answers one Measurement per line on stdout, until
// stdin closes. Not for people: hidden from --help.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_worker_command(CLI::App& app);

}  // namespace mgpu::harness
