#include "harness/cli.h"
#include "harness/nightly/mgpu_bench.h"

int main(int argc, char** argv) {
  mgpu::harness::install_out_of_memory_handlers("mgpu-bench");
  return mgpu::harness::mgpu_bench_main(argc, argv);
}
