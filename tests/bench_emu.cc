// Figures for the virtual device (a benchmark, not a test): interpreter speed in
// thread-instructions per second, and wall time and peak memory of one launch of the Hopper
// matmul template at 256x256x256 (one cluster-free config) and 1024x1024x512 with clusters.
//   build/tests/bench_emu [path/to/libmgpu_vcuda.so]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cuda_driver.h"
#include "tests/support/matmul_cases.h"
#include "tests/support/matmul_on_device.h"

namespace {

long peak_rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

void run(const char* what, const mgpu::kernels::MatmulProblem& p, const char* config) {
  // Compile once outside the measurement (the compile cache makes the timed call's compile cheap).
  mgpu::testing::matmul_error_on_device(p, config, 132, 1);
  reset_peak_rss();
  long before = peak_rss_kib();
  double seconds = 0;
  double err = mgpu::testing::matmul_error_on_device(p, config, 132, 2, &seconds);
  long after = peak_rss_kib();
  auto j = nlohmann::json::parse(mgpu::core::CudaDriver::get().last_emulated_launch());
  double warp_insns = j.value("instructions", 0.0), thread_insns = j.value("thread_instructions", 0.0);
  std::printf("%-34s launch %7.3f s   %10.0f warp-insns  %12.0f thread-insns  %6.1f M thread-insns/s   peak RSS %ld MiB (%ld at start)   rel. error %.2e\n",
              what, seconds, warp_insns, thread_insns, thread_insns / seconds / 1e6, after / 1024, before / 1024, err);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) setenv("MGPU_CUDA_DRIVER", argv[1], 1);
  setenv("MGPU_EMU_REPORTS", "off", 0);
  if (!std::getenv("MGPU_CUDA_DRIVER")) {
    std::fprintf(stderr, "usage: bench_emu path/to/libmgpu_vcuda.so (or set MGPU_CUDA_DRIVER)\n");
    return 2;
  }
  if (!mgpu::core::CudaDriver::get().emulated()) {
    std::fprintf(stderr, "bench_emu: the driver is not the virtual device\n");
    return 2;
  }
  run("256x256x256 bf16 (128x128x64, 4 st.)", {.m = 256, .n = 256, .k = 256}, mgpu::testing::kBase);
  run("1024x1024x512 bf16 cluster M", {.m = 1024, .n = 1024, .k = 512}, mgpu::testing::kClusterM);
  return 0;
}
