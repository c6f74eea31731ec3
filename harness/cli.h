// The mgpu-tune command line. Contract: run_cli() parses argv, runs one subcommand and returns
// the process exit code: 0 success, 1 failure of the work, 2 bad input (usage errors and
// core::Error{InvalidInput}); errors are printed to stderr as "mgpu-tune: error: ...".
#pragma once

namespace mgpu::harness {

int run_cli(int argc, char** argv);

// Thrown by a command that finished its work and wants a particular exit code without an
// error message (e.g. 130 after a clean stop on Ctrl-C).
struct ExitWith {
  int code;
};

}  // namespace mgpu::harness
