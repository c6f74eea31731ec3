// CPU-side overhead of the measurement harness per trial: a model trial in process, and the
// same trial through a worker process (JSON over a pipe), which is what every GPU trial pays
// on top of its kernel time. Run: build/tests/bench_harness --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "harness/measure/measure_trial.h"
#include "harness/measure/worker.h"
#include "kernels/matmul_sm90/config.h"

namespace {

using namespace mgpu::harness;

TrialRequest request() {
  TrialRequest r;
  r.problem = {.m = 4096, .n = 4096, .k = 4096};
  r.config = mgpu::kernels::sm90::MatmulConfig{}.to_tuning_config();
  r.measurer = "model";
  return r;
}

void BM_ModelTrialInProcess(benchmark::State& state) {
  TrialRequest r = request();
  for (auto _ : state) benchmark::DoNotOptimize(measure_trial(r));
}
BENCHMARK(BM_ModelTrialInProcess)->Unit(benchmark::kMicrosecond);

void BM_TrialThroughWorker(benchmark::State& state) {
  WorkerProcess worker({MGPU_TUNE_EXE, "worker"}, 10.0);
  TrialRequest r = request();
  worker.run(r);  // the first request pays the process start
  for (auto _ : state) benchmark::DoNotOptimize(worker.run(r));
}
BENCHMARK(BM_TrialThroughWorker)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_WorkerStart(benchmark::State& state) {
  TrialRequest r = request();
  for (auto _ : state) {
    WorkerProcess worker({MGPU_TUNE_EXE, "worker"}, 10.0);
    benchmark::DoNotOptimize(worker.run(r));
  }
}
BENCHMARK(BM_WorkerStart)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
