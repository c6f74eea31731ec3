// A command-line parse error (CLI11's) said in mgpu-tune's words: "--trials was given 2 times:
// give it once" for CLI11's "--trials: At Most 1 required but received 2", "no inputs given"
// for "inputs is required", and so on (round 19, F42). `app` is the top of the command tree the
// error came from: the deepest subcommand parsed so far is where the option is looked up for
// its kind (a switch) and description. Messages not known here are passed on as CLI11 wrote them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace mgpu::harness {

std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e);

}  // namespace mgpu::harness
