// A deterministic estimate of the sm_90a attention kernel's time (sm90_kernel.h), for ranking
// configs and dry runs without a GPU; labelled "model" downstream. Per CTA (128 query rows of
// one head) and KV block, the busiest SM pays:
//  - tensor cores: S = Q.K^T and O += P.V, 4 x 128 x block_kv x head_dim flops, at the
//    device's dense rate per SM times what a GEMM sustains of it (kMmaEfficiency, measured);
//  - softmax: 128 x block_kv scores, each one ex2 on the MUFU (kMufuPerClock = 16 per SM per
//    clock: the FlashAttention-3 paper's 3.9 TFLOPS of exponentials on an H100 SXM) and
//    kFp32OpsPerScore FP32 operations (scale, max, subtract, sum, mask compare and select) at
//    128 per clock, plus head_dim / 2 rescale multiplies per row-half;
//  - the two consumer warpgroups could overlap one's softmax with the other's MMAs, but neither
//    pipelines its own (no intra-warpgroup overlap as FA3 has) and nothing staggers them (no
//    ping-pong barrier): a block costs the larger of the two terms plus kUnhiddenShare of the
//    smaller (calibrated from FlashAttention-3's ablation, cost_model.cc);
//  - one K/V stage (K and V, block_kv x head_dim x 2 bytes each) per block comes from L2 at
//    kL2BytesPerClockPerSm; with one stage its load is exposed, with more it is hidden behind
//    the previous block's compute (the larger of the two is charged);
//  - a fixed prologue/epilogue per CTA (Q load, O and LSE stores) and the launch.
// CTAs are spread over the SMs (one resident per SM: 384 threads at 232 registers) in waves, a
// causal problem's CTAs each with its own block count (greedily, CTA by CTA, up to 2^20 CTAs;
// beyond, the average load plus one CTA, the bound that schedule converges to). The estimate is never below the roofline
// max(flops / peak, min_bytes / bandwidth). Constants are estimates until a GPU measures them.
#pragma once

#include "core/arch.h"
#include "kernels/attention/attention_problem.h"
#include "kernels/attention/sm90_kernel.h"

namespace mgpu::kernels::attention {

struct AttentionPrediction {
  double mma_ms = 0;       // tensor-core time of the busiest SM
  double softmax_ms = 0;   // MUFU + FP32 time of the busiest SM
  double load_ms = 0;      // K/V stage loads charged (exposed or not hidden)
  double fixed_ms = 0;     // prologue, epilogue, launch
  double roofline_ms = 0;  // max(flops / peak, min_bytes / bandwidth)
  double total_ms = 0;
};

AttentionPrediction predict_attention(const AttentionProblem& p, const AttentionConfig& c, const core::DeviceSpec& device);

}  // namespace mgpu::kernels::attention
