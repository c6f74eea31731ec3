#include "kernels/matmul_common/tile_walk.h"

#include <algorithm>

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mgpu::kernels {

using mlir::Value;

TileCoord emit_planar_snake(core::ir::Emitter& e, Value t, Value m_tiles, Value n_tiles, Value minor_is_n,
                            Value band_width) {
  auto minu = [&](Value a, Value b) { return mlir::arith::MinUIOp::create(e.b, e.loc, a, b); };
  Value one = e.c32(1);
  Value is_n = e.eq(minor_is_n, one);
  Value minor_tiles = e.select(is_n, n_tiles, m_tiles);
  Value major_tiles = e.select(is_n, m_tiles, n_tiles);
  // A band never exceeds the grid: min(band_width, minor_tiles).
  Value w = minu(band_width, minor_tiles);
  Value band_size = e.mul(w, major_tiles);
  Value band = e.div(t, band_size);
  Value within = e.rem(t, band_size);
  Value band_start = e.mul(band, w);
  Value bw = minu(w, e.sub(minor_tiles, band_start));  // the last band may be narrower
  Value major_step = e.div(within, bw);
  Value minor_step = e.rem(within, bw);
  Value odd_step = e.eq(e.bit_and(major_step, one), one);
  Value minor = e.add(band_start, e.select(odd_step, e.sub(e.sub(bw, one), minor_step), minor_step));
  Value odd_band = e.eq(e.bit_and(band, one), one);
  Value major = e.select(odd_band, e.sub(e.sub(major_tiles, one), major_step), major_step);
  return {e.select(is_n, major, minor), e.select(is_n, minor, major)};
}

TileWalk::TileWalk(core::ir::Emitter& e, const TileWalkShape& s, Value M, Value N, Value block, Value grid,
                   Value cta_rank, Value minor_is_n, Value band_width, Value splits)
    : s_(s), minor_is_n_(minor_is_n), band_width_(band_width), splits_(splits) {
  m_ct_ = e.ceil_div(M, e.c32(std::int64_t(s.cta_tile_m) * s.cluster_m));
  n_ct_ = e.ceil_div(N, e.c32(std::int64_t(s.cta_tile_n) * s.cluster_n));
  tiles_ = e.mul(m_ct_, n_ct_);
  Value cluster_tiles = splits_ ? e.mul(tiles_, splits_) : tiles_;  // work units
  Value cs = e.c32(s.cluster_size());
  first_ = e.div(block, cs);
  stride_ = e.div(grid, cs);
  // ceil((cluster_tiles - first) / stride), zero when first >= cluster_tiles
  count_ = e.select(e.ult(first_, cluster_tiles), e.ceil_div(e.sub(cluster_tiles, first_), stride_), e.c32(0));
  rank_m_ = e.div(cta_rank, e.c32(s.cluster_n));
  rank_n_ = e.rem(cta_rank, e.c32(s.cluster_n));
}

std::pair<Value, Value> TileWalk::origin(core::ir::Emitter& e, Value iter) const {
  WorkUnit u = unit(e, iter);
  return {u.m0, u.n0};
}

WorkUnit TileWalk::unit(core::ir::Emitter& e, Value iter) const {
  Value t = e.add(first_, e.mul(iter, stride_));
  Value tile = splits_ ? e.div(t, splits_) : t;
  Value split = splits_ ? e.rem(t, splits_) : e.c32(0);
  TileCoord tc = emit_planar_snake(e, tile, m_ct_, n_ct_, minor_is_n_, band_width_);
  Value tm = e.add(e.mul(tc.m, e.c32(s_.cluster_m)), rank_m_);
  Value tn = e.add(e.mul(tc.n, e.c32(s_.cluster_n)), rank_n_);
  return {e.mul(tm, e.c32(s_.cta_tile_m)), e.mul(tn, e.c32(s_.cta_tile_n)), split, tile};
}

std::vector<HostUnit> host_tile_walk(const TileWalkShape& s, std::int64_t m, std::int64_t n, unsigned block,
                                     unsigned grid, bool minor_is_n, int band_width) {
  // The same steps as emit_planar_snake() and TileWalk, in the same unsigned arithmetic.
  const std::uint64_t cs = std::uint64_t(s.cluster_size());
  const std::uint64_t m_ct = (m + std::int64_t(s.cta_tile_m) * s.cluster_m - 1) / (std::int64_t(s.cta_tile_m) * s.cluster_m);
  const std::uint64_t n_ct = (n + std::int64_t(s.cta_tile_n) * s.cluster_n - 1) / (std::int64_t(s.cta_tile_n) * s.cluster_n);
  const std::uint64_t splits = std::uint64_t(std::max(1, s.splits));
  const std::uint64_t units = m_ct * n_ct * splits, first = block / cs, stride = grid / cs, rank = block % cs;
  const std::uint64_t count = first < units ? (units - first + stride - 1) / stride : 0;
  const std::uint64_t rank_m = rank / std::uint64_t(s.cluster_n), rank_n = rank % std::uint64_t(s.cluster_n);
  const std::uint64_t minor_tiles = minor_is_n ? n_ct : m_ct, major_tiles = minor_is_n ? m_ct : n_ct;
  const std::uint64_t w = std::min<std::uint64_t>(std::uint64_t(band_width), minor_tiles);
  std::vector<HostUnit> out;
  for (std::uint64_t it = 0; it < count; ++it) {
    const std::uint64_t u = first + it * stride, t = u / splits, band_size = w * major_tiles;
    const std::uint64_t band = t / band_size, within = t % band_size, band_start = band * w;
    const std::uint64_t bw = std::min(w, minor_tiles - band_start);
    const std::uint64_t major_step = within / bw, minor_step = within % bw;
    const std::uint64_t minor = band_start + ((major_step & 1) ? bw - 1 - minor_step : minor_step);
    const std::uint64_t major = (band & 1) ? major_tiles - 1 - major_step : major_step;
    const std::uint64_t tm = (minor_is_n ? major : minor) * s.cluster_m + rank_m;
    const std::uint64_t tn = (minor_is_n ? minor : major) * s.cluster_n + rank_n;
    out.push_back({std::int64_t(tm * s.cta_tile_m), std::int64_t(tn * s.cta_tile_n), int(u % splits)});
  }
  return out;
}

unsigned persistent_grid(std::int64_t m, std::int64_t n, const TileWalkShape& s, int sm_count) {
  std::int64_t cm = std::int64_t(s.cta_tile_m) * s.cluster_m, cn = std::int64_t(s.cta_tile_n) * s.cluster_n;
  std::int64_t cluster_tiles = ((m + cm - 1) / cm) * ((n + cn - 1) / cn) * std::max(1, s.splits);
  std::int64_t cs = s.cluster_size();
  std::int64_t clusters = std::min<std::int64_t>(sm_count / cs, cluster_tiles);
  return static_cast<unsigned>(std::max<std::int64_t>(clusters, 1) * cs);
}

}  // namespace mgpu::kernels
