#include "harness/cli.h"
#include "harness/hide_benchmark_env.h"
#include "harness/nightly/mgpu_bench.h"

MGPU_HIDE_BENCHMARK_ENV();

int main(int argc, char** argv) {
  mgpu::harness::restore_benchmark_env();
  mgpu::harness::install_out_of_memory_handlers("mgpu-bench");
  return mgpu::harness::mgpu_bench_main(argc, argv);
}
