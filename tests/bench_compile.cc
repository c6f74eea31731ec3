// Compile latency of the MGPU backend on a representative kernel (the pipelined TMA + wgmma
// mainloop of tests/support): time per stage with each assembler, and configs/s through the
// compile pool with 1 and 2 threads, cold (no cache) and cached. Run:
//   build/tests/bench_compile --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <vector>

#include "core/compile_pool.h"
#include "core/compiler.h"
#include "tests/support/pipelined_mainloop.h"

namespace {

using namespace mgpu::core;

// Distinct configurations, like a tuning run: tile_n x stages.
std::vector<CompileJob> config_batch() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t;
    for (int n : {64, 128, 192, 256})
      for (int s : {3, 4}) t.push_back(::mgpu::testing::pipelined_mainloop_mlir(n, s, 64));
    return t;
  }();
  std::vector<CompileJob> jobs;
  for (const std::string& t : texts) jobs.push_back({t, &parse_arch("sm_90a")});
  return jobs;
}

void BM_Stages(benchmark::State& state, Assembler assembler) {
  std::string text = ::mgpu::testing::pipelined_mainloop_mlir(128, 4, 64);
  CompileOptions o;
  o.assembler = assembler;
  double build = 0, parse = 0, lower = 0, assemble = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    std::string fresh = ::mgpu::testing::pipelined_mainloop_mlir(128, 4, 64);  // kernel build + print
    build += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CompileResult r = compile_module(fresh, parse_arch("sm_90a"), o);
    parse += r.times.parse_ms;
    lower += r.times.lower_ms;
    assemble += r.times.assemble_ms;
  }
  auto avg = benchmark::Counter::kAvgIterations;
  state.counters["build_ms"] = benchmark::Counter(build, avg);
  state.counters["parse_ms"] = benchmark::Counter(parse, avg);
  state.counters["lower_ms"] = benchmark::Counter(lower, avg);
  state.counters["assemble_ms"] = benchmark::Counter(assemble, avg);
}
BENCHMARK_CAPTURE(BM_Stages, nvjitlink, Assembler::NvJitLink)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Stages, ptxas, Assembler::Ptxas)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PoolThroughput(benchmark::State& state) {
  std::vector<CompileJob> jobs = config_batch();
  CompileOptions o;  // no cache: every compile is cold
  for (auto _ : state) benchmark::DoNotOptimize(compile_all(jobs, o, static_cast<int>(state.range(0))));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(jobs.size()));  // configs/s
}
BENCHMARK(BM_PoolThroughput)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CachedThroughput(benchmark::State& state) {
  std::vector<CompileJob> jobs = config_batch();
  auto dir = std::filesystem::temp_directory_path() / ("mgpu-bench-cache-" + std::to_string(::getpid()));
  CompileOptions o;
  o.cache_dir = dir.string();
  compile_all(jobs, o, 2);  // fill
  for (auto _ : state) benchmark::DoNotOptimize(compile_all(jobs, o, static_cast<int>(state.range(0))));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(jobs.size()));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CachedThroughput)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
