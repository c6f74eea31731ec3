// On a Hopper GPU: the CUDA measurer times and verifies a real config, and a kernel with a
// wild store is contained in its worker while the next trial succeeds. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "harness/measure/measure_trial.h"
#include "harness/measure/worker.h"
#include "kernels/matmul_sm90/config.h"
#include "tests/support/gpu_test.h"

namespace mgpu::harness {
namespace {

using GpuMeasure = ::mgpu::testing::HopperGpuTest;

std::string tune_exe() {
  const char* e = std::getenv("MGPU_TUNE_EXE");  // the bundle's run.sh sets it
  return e && *e ? e : MGPU_TUNE_EXE;
}

TrialRequest cuda_request() {
  TrialRequest r;
  r.problem = {.m = 2048, .n = 2048, .k = 2048};
  r.config = kernels::sm90::MatmulConfig{}.to_tuning_config();
  r.measurer = "cuda";
  return r;
}

TEST_F(GpuMeasure, TimesAndVerifiesTheDefaultConfig) {
  Measurement m = measure_trial(cuda_request());
  ASSERT_EQ(m.status, TrialStatus::Ok) << m.message;
  ASSERT_TRUE(m.verification_error.has_value());
  EXPECT_LT(*m.verification_error, 1e-2);
  EXPECT_GE(static_cast<int>(m.samples_ms.size()), StoppingRule::quick().min_samples);
  EXPECT_GT(m.median_ms, 0);
  EXPECT_LE(m.min_ms, m.median_ms);
}

TEST_F(GpuMeasure, CuptiAndEventTimingsAgreeWithinLaunchOverhead) {
  // Events bracket the launch, CUPTI times the kernel alone: events may read a little more
  // (launch latency, a few microseconds), never less by more than their resolution.
  TrialRequest r = cuda_request();
  r.verify = false;
  r.rule = StoppingRule::strict();
  r.timer = "cupti";
  Measurement cupti = measure_trial(r);
  ASSERT_EQ(cupti.status, TrialStatus::Ok) << cupti.message;
  EXPECT_EQ(cupti.timer, "cupti");
  r.timer = "events";
  Measurement events = measure_trial(r);
  ASSERT_EQ(events.status, TrialStatus::Ok) << events.message;
  EXPECT_EQ(events.timer, "events");
  const double diff_us = (events.median_ms - cupti.median_ms) * 1e3;
  std::printf("median kernel time: CUPTI %.4f ms, events %.4f ms (events %+.2f us)\n", cupti.median_ms,
              events.median_ms, diff_us);
  EXPECT_GT(diff_us, -2.0);
  EXPECT_LT(diff_us, 20.0);
}

TEST_F(GpuMeasure, AnOutOfBoundsKernelIsContainedAndTheNextTrialRuns) {
  WorkerProcess worker({tune_exe(), "worker"}, 60.0);
  TrialRequest oob = cuda_request();
  oob.debug_fault = "oob";
  Measurement bad = worker.run(oob);
  EXPECT_EQ(bad.status, TrialStatus::Fault) << bad.message;
  EXPECT_EQ(worker.restarts(), 1);  // its context was lost: the worker was replaced
  Measurement good = worker.run(cuda_request());
  EXPECT_EQ(good.status, TrialStatus::Ok) << good.message;
}

}  // namespace
}  // namespace mgpu::harness
