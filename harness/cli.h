// The mgpu-tune command line. Contract: run_cli() parses argv, runs one subcommand and returns
// the process exit code: 0 success, 1 failure of the work, 2 bad input (usage errors and
// core::Error{InvalidInput}); errors are printed to stderr as "mgpu-tune: error: ...".
#pragma once

#include <string>

namespace mgpu::harness {

int run_cli(int argc, char** argv);

// Memory running out under a limit (ulimit -v) ends the process with exit 1 and one line,
// "PROG: error: out of memory ...", wherever it happens: a std::bad_alloc (or a thread that cannot
// start) left uncaught on a thread, LLVM's own allocation failures, and -- while a limit is set
// and the process is at it -- a null-pointer fault in a library that used a failed malloc
// unchecked (MLIR does, loading its dialects). Anything else crashes as it would have. Call
// first thing in main().
void install_out_of_memory_handlers(const char* prog);
// That line's text after "error: ": "out of memory", with the process's limit when one is set.
std::string out_of_memory_message();

// Thrown by a command that finished its work and wants a particular exit code without an
// error message (e.g. 130 after a clean stop on Ctrl-C).
struct ExitWith {
  int code;
};

}  // namespace mgpu::harness
