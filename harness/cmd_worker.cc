#include "harness/cmd_worker.h"

#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/measure/measure_trial.h"

namespace mgpu::harness {
namespace {

void serve() {
  for (std::string line; std::getline(std::cin, line);) {
    Measurement m;
    try {
      TrialRequest req = nlohmann::json::parse(line).get<TrialRequest>();
      if (req.debug_fault == "crash") raise(SIGSEGV);
      if (req.debug_fault == "hang")
        for (;;) pause();
      if (req.debug_fault == "exit") _exit(3);
      m = measure_trial(req);
    } catch (const std::exception& e) {  // a malformed request is answered, not fatal
      m.status = TrialStatus::InvalidConfig;
      m.source = "worker";
      m.message = e.what();
    }
    std::cout << nlohmann::json(m).dump() << "\n" << std::flush;
  }
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", "Measure trials read from stdin (used by the tuner)");
  cmd->group("");  // hidden
  cmd->callback(serve);
}

}  // namespace mgpu::harness
