#include <cstring>

#include "harness/cli.h"
#include "harness/current_templates.h"
#include "harness/hide_benchmark_env.h"
#include "harness/nightly/mgpu_bench.h"
#include "harness/stop_signals.h"

MGPU_HIDE_BENCHMARK_ENV();

int main(int argc, char** argv) {
  mgpu::harness::restore_benchmark_env();
  // Called as mgpu-bench (a link to this binary): the nightly suite.
  const char* slash = std::strrchr(argv[0], '/');
  const bool bench = std::strcmp(slash ? slash + 1 : argv[0], "mgpu-bench") == 0;
  mgpu::harness::install_out_of_memory_handlers(bench ? "mgpu-bench" : "mgpu-tune");
  mgpu::harness::install_tool_killing_handlers();  // a Ctrl-C takes a running ptxas with it
  mgpu::harness::install_stored_config_check();  // stored configs are judged by their templates' rules
  // A file-size limit (ulimit -f) is a full disk for every writer, not a kill mid-write.
  mgpu::harness::ignore_file_size_limit();
  if (bench) return mgpu::harness::mgpu_bench_main(argc, argv);
  // A closed stdout (`| head`) is a failed write the command handles (exit 1, its database
  // closed), not a SIGPIPE that kills it mid-read.
  mgpu::harness::ignore_broken_pipes();
  return mgpu::harness::run_cli(argc, argv);
}
