#include <cstring>

#include "harness/cli.h"
#include "harness/current_templates.h"
#include "harness/nightly/mgpu_bench.h"

int main(int argc, char** argv) {
  mgpu::harness::install_stored_config_check();  // stored configs are judged by their templates' rules
  // Called as mgpu-bench (a link to this binary): the nightly suite.
  const char* slash = std::strrchr(argv[0], '/');
  if (std::strcmp(slash ? slash + 1 : argv[0], "mgpu-bench") == 0) return mgpu::harness::mgpu_bench_main(argc, argv);
  return mgpu::harness::run_cli(argc, argv);
}
