#include "kernels/matmul_sm100/cost_model.h"

#include <algorithm>

namespace mgpu::kernels::sm100 {

namespace {
constexpr double kSmemBytesPerClock = 128;  // per SM
constexpr double kEpilogueHidden = 0.9;     // double-buffered TMEM: the next tile's MMAs run meanwhile
constexpr int kThreads = 256;               // kernel.cc
constexpr int kMmaK = 16;                   // one tcgen05.mma step of K (bf16/f16)
}  // namespace

double mma_feed_efficiency(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d) {
  const double peak = (p.in_dtype == DType::BF16 ? d.peak_tflops_bf16 : d.peak_tflops_f16) * 1e12;
  const double flops_per_clock = peak / (d.sm_count * d.boost_clock_mhz * 1e6);
  const double in = size_in_bytes(p.in_dtype);
  // Per SM and k16 step: tile_m x (MMA N) x 16 multiply-adds; it reads its A rows and its own
  // share of B (tile_n rows, half of the pair's N when collective).
  const double mma_clocks = 2.0 * c.tile_m * c.mma_n() * 16 / flops_per_clock;
  const double smem_clocks = (c.tile_m + c.tile_n) * 16 * in / kSmemBytesPerClock;
  return std::min(1.0, mma_clocks / smem_clocks);
}

PersistentCost cost_terms(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d) {
  PersistentCost t;
  t.cta_tile_m = c.tile_m;
  t.cta_tile_n = c.mma_n();
  t.cluster_m = c.cluster_size();
  t.tile_k = c.tile_k;
  t.max_concurrent_steps = c.max_concurrent_steps;
  t.grid_minor_dim = c.grid_minor_dim;
  t.grid_tile_width = c.grid_tile_width;
  t.epilogue_pieces = double(c.mma_n()) / c.epilogue_tile_n;
  t.epilogue_hidden = kEpilogueHidden;
  t.mma_efficiency = mma_feed_efficiency(p, c, d);
  // Lint penalty terms: one thread of one warp issues the MMAs; A and B come from SMEM.
  t.threads = kThreads;
  t.mma_issuers = 1;
  t.mmas_per_step = c.tile_k / kMmaK;
  t.mma_operand_bytes = double(c.tile_m + c.tile_n) * kMmaK * size_in_bytes(p.in_dtype);
  t.main_loop_warps = 1;
  t.accumulator_registers = 0;  // tensor memory
  t.uniform_registers = core::parse_arch("sm_100a").regs_per_sm / kThreads / 8 * 8;
  return t;
}

Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d,
                   const KernelDefects& defects) {
  return predict_persistent(p, cost_terms(p, c, d), d, defects);
}

}  // namespace mgpu::kernels::sm100
