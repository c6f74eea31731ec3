#include "kernels/matmul_sm90/cost_model.h"

#include <algorithm>
#include <cmath>

namespace mgpu::kernels::sm90 {

namespace {
// Sustained fractions of the datasheet peaks a well-fed kernel reaches (wgmma issue and
// HBM efficiency); the same for every config, so they shift but never reorder predictions.
constexpr double kTensorEfficiency = 0.85;
constexpr double kMemoryEfficiency = 0.85;
constexpr double kLaunchMs = 0.004;
constexpr double kLoadLatencyUs = 1.0;  // TMA round trip a stage must cover
}  // namespace

Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d) {
  const double in = size_in_bytes(p.in_dtype), out = size_in_bytes(p.out_dtype);
  const double peak_flops = (p.in_dtype == DType::BF16 ? d.peak_tflops_bf16 : d.peak_tflops_f16) * 1e12;
  const double bandwidth = d.hbm_gbytes_per_s * 1e9;
  Prediction r;
  r.roofline_ms = std::max(p.flops() / peak_flops, p.min_bytes() / bandwidth) * 1e3;

  const double cm = c.cta_tile_m(), cn = c.cta_tile_n(), tk = c.tile_k;
  const double m_tiles = std::ceil(p.m / cm), n_tiles = std::ceil(p.n / cn), k_iters = std::ceil(p.k / tk);
  const double tiles = m_tiles * n_tiles;
  const double sms = d.sm_count;
  const double waves = std::ceil(tiles / sms);

  // Tensor cores: every CTA computes whole padded tiles; the busiest SM does `waves` of them.
  const double tile_flops = 2.0 * cm * cn * k_iters * tk;
  const double per_sm_flops = peak_flops * kTensorEfficiency / sms;
  r.compute_ms = waves * tile_flops / per_sm_flops * 1e3;

  // Pipeline: a stage holds one k-step of the CTA tile; stages - 1 steps of compute must cover
  // the load latency, else the tensor cores wait.
  const double step_us = tile_flops / k_iters / per_sm_flops * 1e6;
  const double cover = (c.max_concurrent_steps - 1) * step_us;
  const double pipeline = std::max(1.0, kLoadLatencyUs / cover);
  r.compute_ms *= pipeline;

  // DRAM: per wave, the band of width w along the minor dimension touches w minor tiles and
  // ctas / w major tiles; each distinct tile is fetched once per wave, the rest hits L2.
  const double ctas = std::min(sms, tiles);
  const double w = std::min<double>(c.grid_tile_width, c.grid_minor_dim == Dim::N ? n_tiles : m_tiles);
  const double minor_tiles_per_wave = w, major_tiles_per_wave = std::ceil(ctas / w);
  const double a_tiles = c.grid_minor_dim == Dim::N ? major_tiles_per_wave : minor_tiles_per_wave;
  const double b_tiles = c.grid_minor_dim == Dim::N ? minor_tiles_per_wave : major_tiles_per_wave;
  const double k_bytes = k_iters * tk * in;
  const double wave_bytes = (std::min(a_tiles, m_tiles) * cm + std::min(b_tiles, n_tiles) * cn) * k_bytes;
  const double bytes = std::max(waves * wave_bytes + double(p.m) * p.n * out, p.min_bytes());
  r.memory_ms = bytes / (bandwidth * kMemoryEfficiency) * 1e3;

  // Epilogue: each tile's accumulator goes out through SMEM in epi pieces.
  const double pieces = (c.tile_m / c.epi_tile_m) * (c.tile_n / c.epi_tile_n);
  r.overhead_ms = kLaunchMs + waves * pieces * 0.3e-3;

  r.ms = std::max({r.compute_ms, r.memory_ms, r.roofline_ms}) + r.overhead_ms;
  return r;
}

}  // namespace mgpu::kernels::sm90
