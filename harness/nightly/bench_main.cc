#include "harness/nightly/mgpu_bench.h"

int main(int argc, char** argv) { return mgpu::harness::mgpu_bench_main(argc, argv); }
