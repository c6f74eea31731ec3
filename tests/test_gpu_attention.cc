// On a Hopper GPU: the attention kernel through the same launch preparation the virtual-device
// test uses, checked against the float64 reference at a small problem of the same kind (also on
// the virtual device, as emu.gpu_kernels runs these tests), then timed on a GPU at a large one (CUDA events, 20 launches after a warm-up; the median recorded as
// TFLOP/s: --gtest_output=xml keeps it). Skips without one.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/cuda_driver.h"
#include "kernels/attention/cost_model.h"

#include "kernels/attention/device_run.h"
#include "support/gpu_test.h"

namespace mgpu::kernels::attention {
namespace {

using GpuAttention = ::mgpu::testing::HopperGpuTest;

void check_and_time(const AttentionProblem& p, const AttentionConfig& c, const char* name) {
  AttentionProblem small = p;
  small.batch = 1;
  small.heads = 2;
  small.kv_heads = 2;
  small.seq_q = small.seq_kv = 520;  // ragged: not a multiple of 128
  AttentionRun check = run_attention(small, c, 1);
  EXPECT_TRUE(check.compared && check.comparison.ok) << check.comparison.describe();
  // On the virtual device (emu.gpu_kernels runs these tests there) the check is the test; a
  // timing of the large problem would take hours and mean nothing.
  if (core::CudaDriver::get().emulated()) return;
  AttentionRun r = run_attention(p, c, 1, 20, /*compare=*/false);
  std::sort(r.times_ms.begin(), r.times_ms.end());
  const double median = r.times_ms[r.times_ms.size() / 2];
  ::testing::Test::RecordProperty(name, std::to_string(p.flops() / (median * 1e-3) / 1e12) + " TFLOP/s, median " +
                                            std::to_string(median) + " ms, " + p.key());
}

AttentionProblem problem(std::int64_t seq, std::int64_t d, bool causal) {
  AttentionProblem p;
  p.batch = 4;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = seq;
  p.seq_kv = seq;
  p.head_dim = d;
  p.causal = causal;
  return p;
}

TEST_F(GpuAttention, HeadDim128Seq4096MatchesTheReferenceAndIsTimed) {
  check_and_time(problem(4096, 128, false), {64, 128, 2}, "hd128_s4096");
  check_and_time(problem(4096, 128, true), {64, 128, 2}, "hd128_s4096_causal");
}

TEST_F(GpuAttention, HeadDims64And256) {
  check_and_time(problem(4096, 64, false), {64, 128, 2}, "hd64_s4096");
  check_and_time(problem(2048, 256, false), {64, 64, 2}, "hd256_s2048");
}

// The lease table (scripts/gpu_session.sh attention): every valid config at head dims 64/128/256,
// seq 512..16k (batch x seq = 16k tokens, heads x head_dim = 2048, as FlashAttention-3's
// benchmarks), causal and not -- each config checked at a small ragged problem of its kind, then
// timed (10 launches after a warm-up, the median) beside the cost model's prediction, under both
// consumer schedules (serial, intra-warpgroup overlap: A B in one lease). A line per
// config to MGPU_ATTENTION_SWEEP as it is measured (a lease cut short keeps what it measured);
// skipped unless that variable names the file.
TEST_F(GpuAttention, SweepEveryValidConfigForTheLeaseTable) {
  const char* path = std::getenv("MGPU_ATTENTION_SWEEP");
  if (!path || !*path) GTEST_SKIP() << "set MGPU_ATTENTION_SWEEP=FILE to run the lease sweep";
  if (core::CudaDriver::get().emulated()) GTEST_SKIP() << "times kernels: on a GPU only";
  std::ofstream out(path);
  ASSERT_TRUE(out) << "cannot write " << path;
  out << "head_dim\tseq\tcausal\tblock_kv\tstages\tschedule\tmedian_ms\ttflops\tpredicted_ms\tcheck\n";
  const core::DeviceSpec& device = core::parse_arch("sm_90a").default_device();
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (std::int64_t seq : {512, 1024, 2048, 4096, 8192, 16384}) {
        AttentionProblem p = problem(seq, d, causal);
        p.batch = 16384 / seq;
        p.heads = p.kv_heads = 2048 / d;
        for (int bkv : {64, 128})
          for (int stages = 1; stages <= 4; ++stages)
            for (ConsumerSchedule schedule : {ConsumerSchedule::Serial, ConsumerSchedule::IntraWgOverlap}) {
            const AttentionConfig c{64, bkv, stages, schedule};
            if (why_invalid(p, c)) continue;
            AttentionProblem small = p;
            small.batch = 1;
            small.heads = small.kv_heads = 2;
            small.seq_q = small.seq_kv = 520;
            const AttentionRun check = run_attention(small, c, 1);
            EXPECT_TRUE(check.comparison.ok) << p.key() << " " << bkv << "/" << stages << ": " << check.comparison.describe();
            AttentionRun r = run_attention(p, c, 1, 10, /*compare=*/false);
            std::sort(r.times_ms.begin(), r.times_ms.end());
            const double median = r.times_ms[r.times_ms.size() / 2];
            out << d << "\t" << seq << "\t" << causal << "\t" << bkv << "\t" << stages << "\t"
                << (schedule == ConsumerSchedule::Serial ? "serial" : "intra_wg_overlap") << "\t" << median << "\t"
                << p.flops() / (median * 1e-3) / 1e12 << "\t" << predict_attention(p, c, device).total_ms << "\t"
                << (check.comparison.ok ? "ok" : "WRONG") << std::endl;
          }
      }
}

}  // namespace
}  // namespace mgpu::kernels::attention
