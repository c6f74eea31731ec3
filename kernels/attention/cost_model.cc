#include "kernels/attention/cost_model.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace mgpu::kernels::attention {
namespace {

constexpr double kMufuPerClock = 16;         // ex2 per SM per clock (4 SM sub-partitions x 4)
constexpr double kFp32PerClock = 128;        // FP32 lanes per SM
constexpr double kFp32OpsPerScore = 7;       // FMUL scale, FMNMX, FADD sub, FADD sum, ISETP x2, SEL
// What the tensor cores sustain of the datasheet rate: cuBLASLt at 4096^3 bf16 on our H100,
// 783 TFLOP/s of 989 (README, the second run on a GPU).
constexpr double kMmaEfficiency = 0.79;
// Of the smaller of MMA and softmax per block, the part not hidden. Calibrated (until our own
// GPU measures it) from FlashAttention-3's ablation at head dim 128, seq 8k on an H100: 582
// TFLOP/s without the intra-warpgroup GEMM-softmax pipelining this kernel also lacks, 661 with
// it -- near-serial softmax, as two consumer warpgroups that start together stay in step.
constexpr double kUnhiddenShare = 0.9;
// The same with the intra-warpgroup overlap (ConsumerSchedule::IntraWgOverlap): the softmax of
// block j runs under block j-1's P.V MMA. Calibrated so that the two schedules' predictions at
// head dim 128, seq 8k stand as FlashAttention-3's ablation does (661 : 582); our GPU measures
// both in the attention lease step.
constexpr double kUnhiddenShareOverlap = 0.46;
constexpr double kL2BytesPerClockPerSm = 64; // sustained L2 -> SMEM per SM (about 16 TB/s at 132 SMs)
// Beyond this many CTAs the schedule is not simulated one CTA at a time (its balance has
// converged; a prediction stays milliseconds even for the largest problem the kernel takes).
constexpr std::int64_t kSimulatedCtas = std::int64_t{1} << 20;
constexpr double kCtaFixedUs = 2.0;          // Q load latency, O/LSE stores, setmaxnreg, barriers
constexpr double kLaunchUs = 4.0;
constexpr int kCtaRows = 128;

}  // namespace

AttentionPrediction predict_attention(const AttentionProblem& p, const AttentionConfig& c, const core::DeviceSpec& dev) {
  AttentionPrediction out;
  const double clock_hz = dev.boost_clock_mhz * 1e6;
  const double peak = (p.dtype == DType::F16 ? dev.peak_tflops_f16 : dev.peak_tflops_bf16) * 1e12;
  const double mma_flops_per_clock_sm = kMmaEfficiency * peak / dev.sm_count / clock_hz;
  const double d = static_cast<double>(p.head_dim), bkv = c.block_kv;

  // Clocks of one KV block of one CTA.
  const double mma = 4.0 * kCtaRows * bkv * d / mma_flops_per_clock_sm;
  const double scores = kCtaRows * bkv;
  const double softmax = std::max(scores / kMufuPerClock, (scores * kFp32OpsPerScore + kCtaRows * d / 2) / kFp32PerClock);
  const double unhidden = c.schedule == ConsumerSchedule::IntraWgOverlap ? kUnhiddenShareOverlap : kUnhiddenShare;
  const double compute = std::max(mma, softmax) + unhidden * std::min(mma, softmax);
  const double load = 2.0 * bkv * d * 2 / kL2BytesPerClockPerSm;
  const double step = c.max_concurrent_steps > 1 ? std::max(compute, load) : compute + load;

  // Blocks per CTA: all of seq_kv, or (causal) those the CTA's last row sees.
  const std::int64_t q_blocks = (p.seq_q + kCtaRows - 1) / kCtaRows;
  std::vector<std::int64_t> blocks(static_cast<std::size_t>(q_blocks));
  for (std::int64_t qb = 0; qb < q_blocks; ++qb) {
    const std::int64_t last = std::min(p.seq_q - 1, (qb + 1) * kCtaRows - 1);
    const std::int64_t keys = p.visible_keys(last);
    blocks[static_cast<std::size_t>(qb)] = (keys + c.block_kv - 1) / c.block_kv;
  }
  // CTAs in launch order (x: query block fastest), dealt to SMs a wave at a time; the busiest
  // SM's sum is the kernel's time (greedy: each CTA to the SM free first).
  const std::int64_t ctas = q_blocks * p.heads * p.batch;
  const std::size_t sms = static_cast<std::size_t>(dev.sm_count);
  std::vector<double> sm_clocks(sms, 0.0), sm_mma(sms, 0.0), sm_soft(sms, 0.0), sm_load(sms, 0.0), sm_fixed(sms, 0.0);
  const double fixed = kCtaFixedUs * 1e-6 * clock_hz;
  std::size_t busiest = 0;
  if (ctas <= kSimulatedCtas) {
    // Greedy list scheduling, each CTA to the SM free first: a min-heap of (clock, SM).
    using Slot = std::pair<double, std::size_t>;
    std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free_first;
    for (std::size_t s = 0; s < sms; ++s) free_first.push({0.0, s});
    for (std::int64_t i = 0; i < ctas; ++i) {
      const auto n = static_cast<double>(blocks[static_cast<std::size_t>(i % q_blocks)]);
      const std::size_t s = free_first.top().second;
      free_first.pop();
      sm_clocks[s] += n * step + fixed;
      sm_mma[s] += n * mma;
      sm_soft[s] += n * softmax;
      sm_load[s] += n * (step - compute);  // the part of each step the loads add
      sm_fixed[s] += fixed;
      free_first.push({sm_clocks[s], s});
    }
    busiest = static_cast<std::size_t>(std::max_element(sm_clocks.begin(), sm_clocks.end()) - sm_clocks.begin());
  } else {
    // So many CTAs that the greedy schedule has converged: the busiest SM carries the average
    // load plus at most one CTA more (list scheduling's bound), its terms in the same shares.
    double total_blocks = 0, most = 0;
    for (std::int64_t b : blocks) total_blocks += static_cast<double>(b), most = std::max(most, static_cast<double>(b));
    const double per_sm = total_blocks * static_cast<double>(p.heads * p.batch) / static_cast<double>(sms) + most;
    const double ctas_per_sm = static_cast<double>(ctas) / static_cast<double>(sms) + 1;
    sm_clocks[0] = per_sm * step + ctas_per_sm * fixed;
    sm_mma[0] = per_sm * mma;
    sm_soft[0] = per_sm * softmax;
    sm_load[0] = per_sm * (step - compute);
    sm_fixed[0] = ctas_per_sm * fixed;
  }
  const double to_ms = 1e3 / clock_hz;
  out.mma_ms = sm_mma[busiest] * to_ms;
  out.softmax_ms = sm_soft[busiest] * to_ms;
  out.load_ms = sm_load[busiest] * to_ms;
  out.fixed_ms = sm_fixed[busiest] * to_ms + kLaunchUs * 1e-3;
  out.roofline_ms = std::max(p.flops() / peak, p.min_bytes() / (dev.hbm_gbytes_per_s * 1e9)) * 1e3;
  out.total_ms = std::max(sm_clocks[busiest] * to_ms + kLaunchUs * 1e-3, out.roofline_ms);
  return out;
}

}  // namespace mgpu::kernels::attention
