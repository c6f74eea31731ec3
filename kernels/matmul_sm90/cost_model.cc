#include "kernels/matmul_sm90/cost_model.h"

namespace mgpu::kernels::sm90 {

namespace {
constexpr int kThreads = 384;          // kernel.cc: a producer and two consumer warpgroups
constexpr int kConsumers = 2;
constexpr int kWgmmaM = 64, kWgmmaK = 16;  // one wgmma: m64 x tile_n x k16 (bf16/f16)
// Measured, not derived: on an H100 (2026-11-24, bf16 4096^3, `bench matmul`), a 2-CTA cluster
// first cost 1.3-1.7x (776 -> 465 and 500 TFLOP/s for 128x128 along M and N): the consumers'
// remote arrive was .release.cluster, a MEMBAR.ALL.GPU per k-step (ncu: warps stalled on it).
// With the relaxed arrive the same A/B gave 763 -> 731 (M) and 760 (N) for 128x128, 693 -> 672
// (M) for 128x192: median ratio 1.03, which clusters are still charged.
constexpr double kMeasuredClusterSlowdown = 1.03;
// Pingpong: a warpgroup's epilogue runs while the other's MMAs keep the tensor cores busy, so
// none of it is charged (CUTLASS's reason for the schedule; an estimate until measured here).
constexpr double kPingPongEpilogueHidden = 1.0;
}  // namespace

PersistentCost cost_terms(const MatmulProblem& p, const MatmulConfig& c) {
  PersistentCost t;
  t.cta_tile_m = c.cta_tile_m();
  t.cta_tile_n = c.cta_tile_n();
  t.cluster_m = c.cluster_dimension == ClusterDim::M ? 2 : 1;
  t.cluster_n = c.cluster_dimension == ClusterDim::N ? 2 : 1;
  t.tile_k = c.tile_k;
  t.splits = c.schedule == Schedule::SplitK ? c.split_k : 1;
  t.stream = c.schedule == Schedule::StreamK;
  t.max_concurrent_steps = c.max_concurrent_steps;
  t.grid_minor_dim = c.grid_minor_dim;
  t.grid_tile_width = c.grid_tile_width;
  if (c.cluster_dimension != ClusterDim::None) t.mma_efficiency = 1.0 / kMeasuredClusterSlowdown;
  t.epilogue_pieces = double(c.tile_m / c.epi_rows()) * (c.tile_n / c.epi_tile_n);
  if (c.pingpong()) t.epilogue_hidden = kPingPongEpilogueHidden;
  // Lint penalty terms.
  t.threads = kThreads;
  t.mma_issuers = kConsumers;
  // With swap_ab the MMAs run over C^T: 64-row blocks of tile_n, wgmma N = tile_m.
  t.mmas_per_step = (c.mma_rows() / kWgmmaM) * (c.tile_k / kWgmmaK);
  t.mma_operand_bytes = double(kWgmmaM + c.mma_n()) * kWgmmaK * size_in_bytes(p.in_dtype);
  t.main_loop_warps = kConsumers * 4;
  t.accumulator_registers = c.accumulator_registers();
  t.uniform_registers = core::parse_arch("sm_90a").regs_per_sm / kThreads / 8 * 8;
  return t;
}

Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d,
                   const KernelDefects& defects) {
  return predict_persistent(p, cost_terms(p, c), d, defects);
}

}  // namespace mgpu::kernels::sm90
