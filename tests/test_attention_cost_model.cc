// The attention cost model (kernels/attention/cost_model.h): its floor, and the orderings it
// must get right to rank configs -- causal work about half of dense, a single stage exposing
// its loads, short heads spending more of their time in the softmax.
#include <gtest/gtest.h>

#include "core/arch.h"
#include "kernels/attention/cost_model.h"

namespace mgpu::kernels::attention {
namespace {

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

const core::DeviceSpec& h100() { return core::parse_arch("sm_90a").default_device(); }

TEST(AttentionCostModel, NeverBelowTheRoofline) {
  for (std::int64_t seq : {128, 1000, 8192})
    for (std::int64_t d : {64, 128, 256})
      for (bool causal : {false, true}) {
        AttentionPrediction r = predict_attention(problem(seq, d, causal), {64, 64, 2}, h100());
        EXPECT_GE(r.total_ms, r.roofline_ms);
        EXPECT_GT(r.mma_ms, 0);
      }
}

TEST(AttentionCostModel, CausalCostsAboutHalfOfDenseAtLongSequences) {
  const double dense = predict_attention(problem(8192, 128, false), {64, 128, 2}, h100()).total_ms;
  const double causal = predict_attention(problem(8192, 128, true), {64, 128, 2}, h100()).total_ms;
  EXPECT_GT(causal / dense, 0.45);
  EXPECT_LT(causal / dense, 0.65);
}

TEST(AttentionCostModel, OneStageExposesItsLoadsAndMoreNeverCostMore) {
  const AttentionProblem p = problem(4096, 128, false);
  const double one = predict_attention(p, {64, 64, 1}, h100()).total_ms;
  const double two = predict_attention(p, {64, 64, 2}, h100()).total_ms;
  const double three = predict_attention(p, {64, 64, 3}, h100()).total_ms;
  EXPECT_GT(one, two);
  EXPECT_LE(three, two);
}

TEST(AttentionCostModel, ShortHeadsSpendMoreOfTheirTimeOnTheSoftmax) {
  auto share = [](std::int64_t d) {
    AttentionPrediction r = predict_attention(problem(8192, d, false), {64, 64, 2}, h100());
    return r.softmax_ms / r.mma_ms;
  };
  EXPECT_GT(share(64), share(128));
  EXPECT_GT(share(128), share(256));
}

TEST(AttentionCostModel, LongDenseHeadDim128LandsBetweenHalfAndNinetyPercentOfPeak) {
  const AttentionProblem p = problem(8192, 128, false);
  const double ms = predict_attention(p, {64, 128, 2}, h100()).total_ms;
  const double tflops = p.flops() / (ms * 1e-3) / 1e12;
  RecordProperty("predicted_tflops", std::to_string(tflops));
  EXPECT_GT(tflops, 0.5 * h100().peak_tflops_bf16);
  EXPECT_LT(tflops, 0.9 * h100().peak_tflops_bf16);
}

}  // namespace
}  // namespace mgpu::kernels::attention
