// On a Hopper GPU: the attention kernel through the same launch preparation the virtual-device
// test uses, checked against the float64 reference at a small problem of the same kind, then
// timed at a large one (CUDA events, 20 launches after a warm-up; the median recorded as
// TFLOP/s: --gtest_output=xml keeps it). Skips without one.
#include <algorithm>

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

}  // namespace
}  // namespace mgpu::kernels::attention
