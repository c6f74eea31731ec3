#include "kernels/matmul_common/cost_model.h"

#include <algorithm>
#include <cmath>

namespace mgpu::kernels {

namespace {
// Sustained fractions of the datasheet peaks a well-fed kernel reaches (MMA issue and HBM
// efficiency); the same for every config, so they shift but never reorder predictions.
constexpr double kTensorEfficiency = 0.85;
constexpr double kMemoryEfficiency = 0.85;
constexpr double kLaunchMs = 0.004;
constexpr double kLoadLatencyUs = 1.0;    // TMA round trip a stage must cover
constexpr double kEpiloguePieceMs = 0.3e-3;
constexpr double kFixupUs = 1.0;          // split-K: an atomic's round trip to L2 and back (estimate)
// Lint penalties (cost_model.h says why each is what it is).
constexpr double kSmemBytesPerClock = 128;  // per SM: 32 banks x 4 bytes, also L1's datapath
constexpr double kRegisterCapLoss = 0.02;   // setmaxnreg-dropped at a full capped budget (estimate)
constexpr double kWideMembarClocks = 730;   // membar-in-main-loop, per MEMBAR and k-step (H100, measured)

// What each of the kernel's lints adds, in ms, for `waves` tiles of `k_iters` k-steps on the
// busiest SM whose tensor-core time is `compute_ms`.
std::vector<LintPenalty> lint_penalties(const MatmulProblem& p, const PersistentCost& c, const core::DeviceSpec& d,
                                        const KernelDefects& x, double waves, double k_iters, double compute_ms) {
  std::vector<LintPenalty> out;
  if (!x.known) return out;
  const double ms_per_clock = 1.0 / (d.boost_clock_mhz * 1e3);
  if (x.setmaxnreg_dropped) {
    const double share = std::min(1.0, c.accumulator_registers / std::max(1, c.uniform_registers));
    out.push_back({"setmaxnreg-dropped", compute_ms * kRegisterCapLoss * share});
  }
  if (x.serialised_mma != KernelDefects::Serialised::None) {
    const double steps = x.serialised_mma == KernelDefects::Serialised::EveryStep ? k_iters : 1.0;
    const double lost_clocks =
        double(c.mma_issuers) * c.mmas_per_step * c.mma_operand_bytes / kSmemBytesPerClock;
    out.push_back({"serialised-mma", waves * steps * lost_clocks * ms_per_clock});
  }
  if (x.spill_bytes > 0)
    out.push_back({"spills", waves * 2.0 * x.spill_bytes * c.threads / kSmemBytesPerClock * ms_per_clock});
  if (x.main_loop_local_ops > 0)
    out.push_back({"local-memory-in-main-loop",
                   waves * k_iters * double(x.main_loop_local_ops) * c.main_loop_warps * ms_per_clock});
  if (x.main_loop_membars > 0)
    out.push_back({"membar-in-main-loop", waves * k_iters * double(x.main_loop_membars) * kWideMembarClocks * ms_per_clock});
  if (x.epilogue_bank_ways > 1) {
    const double store_clocks = double(c.cta_tile_m) * c.cta_tile_n * size_in_bytes(p.out_dtype) / kSmemBytesPerClock;
    out.push_back({"bank-conflicts", waves * (x.epilogue_bank_ways - 1) * store_clocks *
                                         (1.0 - std::clamp(c.epilogue_hidden, 0.0, 1.0)) * ms_per_clock});
  }
  return out;
}

}  // namespace

Prediction predict_persistent(const MatmulProblem& p, const PersistentCost& c, const core::DeviceSpec& d,
                              const KernelDefects& defects) {
  const double in = size_in_bytes(p.in_dtype), out = size_in_bytes(p.out_dtype);
  const double peak_flops = (p.in_dtype == DType::BF16 ? d.peak_tflops_bf16 : d.peak_tflops_f16) * 1e12;
  const double bandwidth = d.hbm_gbytes_per_s * 1e9;
  Prediction r;
  r.roofline_ms = std::max(p.flops() / peak_flops, p.min_bytes() / bandwidth) * 1e3;

  const double cm = c.cta_tile_m, cn = c.cta_tile_n, tk = c.tile_k;
  const double cs = double(c.cluster_m) * c.cluster_n;
  // The snake walks cluster tiles; a cluster is cs CTAs on cs SMs.
  const double um = cm * c.cluster_m, un = cn * c.cluster_n;
  const double m_units = std::ceil(p.m / um), n_units = std::ceil(p.n / un), k_iters = std::ceil(p.k / tk);
  const double units = m_units * n_units;
  const double splits = std::max(1, c.splits);
  const double clusters = std::max(1.0, std::floor(d.sm_count / cs));
  double waves = std::ceil(units * splits / clusters);
  double unit_k_iters = std::ceil(k_iters / splits);
  // Stream-K: the busiest CTA's k-steps, counted as `waves` units of unit_k_iters steps.
  const double stream_grid = std::min(clusters, units * k_iters);
  const double stream_steps = std::ceil(units * k_iters / stream_grid);
  if (c.stream) {
    unit_k_iters = std::min(k_iters, stream_steps);
    waves = stream_steps / unit_k_iters;
  }

  // Tensor cores: every CTA computes whole padded tiles (or K ranges of them); the busiest SM
  // does `waves` of them.
  const double tile_flops = 2.0 * cm * cn * unit_k_iters * tk;
  const double per_sm_flops = peak_flops * kTensorEfficiency * std::clamp(c.mma_efficiency, 0.05, 1.0) / d.sm_count;
  r.compute_ms = waves * tile_flops / per_sm_flops * 1e3;

  // Pipeline: a stage holds one k-step of the CTA tile; stages - 1 steps of compute must cover
  // the load latency, else the tensor cores wait.
  const double step_us = tile_flops / unit_k_iters / per_sm_flops * 1e6;
  const double cover = (c.max_concurrent_steps - 1) * step_us;
  r.compute_ms *= std::max(1.0, kLoadLatencyUs / cover);

  // DRAM: per wave, the band of width w along the minor dimension touches w minor units and
  // clusters / w major units; each distinct operand tile is fetched once per wave, the rest
  // hits L2.
  const double active = c.stream ? std::min(stream_grid, units)
                                 : std::min(std::max(1.0, std::floor(clusters / splits)), units);  // tiles a wave finishes
  const double w = std::min<double>(c.grid_tile_width, c.grid_minor_dim == Dim::N ? n_units : m_units);
  const double minor_per_wave = w, major_per_wave = std::ceil(active / w);
  const double a_units = c.grid_minor_dim == Dim::N ? major_per_wave : minor_per_wave;
  const double b_units = c.grid_minor_dim == Dim::N ? minor_per_wave : major_per_wave;
  const double k_bytes = k_iters * tk * in;
  const double wave_bytes = (std::min(a_units, m_units) * um + std::min(b_units, n_units) * un) * k_bytes;
  const double tile_waves = std::ceil(units / active);
  double partial_bytes = splits > 1 ? units * splits * cm * cn * 4.0 * 2.0 : 0.0;  // written, read back
  const bool stream_shares = c.stream && std::fmod(units * k_iters, stream_grid * k_iters) != 0.0;
  if (stream_shares) partial_bytes = 2.0 * stream_grid * cm * cn * 4.0 * 2.0;
  const double bytes = std::max(tile_waves * wave_bytes + double(p.m) * p.n * out + partial_bytes, p.min_bytes());
  r.memory_ms = bytes / (bandwidth * kMemoryEfficiency) * 1e3;

  // Epilogue: each tile's accumulator goes out through SMEM in pieces; what is not
  // overlapped with the next tile's MMAs adds up.
  const double epilogues = c.stream ? std::ceil(stream_steps / k_iters) + (stream_shares ? 1.0 : 0.0) : waves;
  r.overhead_ms = kLaunchMs + epilogues * c.epilogue_pieces * kEpiloguePieceMs * (1.0 - std::clamp(c.epilogue_hidden, 0.0, 1.0));
  if (splits > 1) r.overhead_ms += waves * kFixupUs * 1e-3;
  if (stream_shares) r.overhead_ms += 2.0 * kFixupUs * 1e-3;

  // The kernel's lints: added, never overlapped (cost_model.h), so a linted kernel never ties.
  r.lint_penalties = lint_penalties(p, c, d, defects, waves, unit_k_iters, r.compute_ms);
  for (const LintPenalty& l : r.lint_penalties) r.lint_ms += l.ms;

  r.ms = std::max({r.compute_ms, r.memory_ms, r.roofline_ms}) + r.overhead_ms + r.lint_ms;
  return r;
}

}  // namespace mgpu::kernels
