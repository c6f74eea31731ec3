#include "kernels/matmul_common/tile_walk.h"

#include <algorithm>

#include "kernels/matmul_common/launch_math.h"
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

namespace {
mlir::Value to_i32(core::ir::Emitter& e, mlir::Value v64) { return mlir::arith::TruncIOp::create(e.b, e.loc, e.i32(), v64); }
mlir::Value umin(core::ir::Emitter& e, mlir::Value a, mlir::Value b) { return mlir::arith::MinUIOp::create(e.b, e.loc, a, b); }
mlir::Value umax(core::ir::Emitter& e, mlir::Value a, mlir::Value b) { return mlir::arith::MaxUIOp::create(e.b, e.loc, a, b); }
}  // namespace

Value WorkUnit::slot(core::ir::Emitter& e, Value j) const {
  if (!slot_step) return e.add(e.mul(tile, segments), j);  // split-K: tile x splits + j
  return e.add(e.add(slot_base, e.mul(j, slot_step)), e.select(e.eq(j, e.c32(0)), first_extra, e.c32(0)));
}

TileWalk::TileWalk(core::ir::Emitter& e, const TileWalkShape& s, Value M, Value N, Value block, Value grid,
                   Value cta_rank, Value minor_is_n, Value band_width, Value splits, Value k_steps)
    : s_(s), minor_is_n_(minor_is_n), band_width_(band_width), splits_(s.stream ? Value() : splits), k_steps_(k_steps) {
  // (The order of these ops is kept as it was before stream-K: the data-parallel and split-K
  // kernels' PTX, and so their verifications, stay the same.)
  m_ct_ = e.ceil_div(M, e.c32(std::int64_t(s.cta_tile_m) * s.cluster_m));
  n_ct_ = e.ceil_div(N, e.c32(std::int64_t(s.cta_tile_n) * s.cluster_n));
  tiles_ = e.mul(m_ct_, n_ct_);
  Value units = splits_ ? e.mul(tiles_, splits_) : tiles_;  // work units: tiles, or tiles x splits
  Value cs = e.c32(s.cluster_size());
  first_ = e.div(block, cs);
  stride_ = e.div(grid, cs);
  if (s.stream) {
    const StreamShare sh = stream_share(e);
    Value t_first = e.div(sh.start, sh.k);
    Value t_last = e.div(e.sub(sh.end, e.c64(1)), sh.k);  // meaningless (and unused) for an empty share
    count_ = e.select(e.ult(sh.start, sh.end), to_i32(e, e.add(e.sub(t_last, t_first), e.c64(1))), e.c32(0));
  } else {
    // ceil((units - first) / stride), zero when first >= units
    count_ = e.select(e.ult(first_, units), e.ceil_div(e.sub(units, first_), stride_), e.c32(0));
  }
  rank_m_ = e.div(cta_rank, e.c32(s.cluster_n));
  rank_n_ = e.rem(cta_rank, e.c32(s.cluster_n));
}

TileWalk::StreamShare TileWalk::stream_share(core::ir::Emitter& e) const {
  // In 64 bits: I x G exceeds i32 for large problems.
  StreamShare s;
  s.k = e.zext64(k_steps_);
  s.iters = e.mul(e.zext64(tiles_), s.k);
  s.grid = e.zext64(stride_);
  s.block = e.zext64(first_);
  s.start = e.div(e.mul(s.block, s.iters), s.grid);
  s.end = e.div(e.mul(e.add(s.block, e.c64(1)), s.iters), s.grid);
  return s;
}

std::pair<Value, Value> TileWalk::origin(core::ir::Emitter& e, Value iter) const {
  WorkUnit u = unit(e, iter);
  return {u.m0, u.n0};
}

WorkUnit TileWalk::unit(core::ir::Emitter& e, Value iter) const {
  WorkUnit u;
  Value tile;
  if (s_.stream) {
    Value zero = e.c32(0), one = e.c32(1);
    // Stream-K: tile t_first + iter, clipped to this CTA's share [start, end) of the iterations;
    // the tile's iterations [tk, tk + k) are owned by CTAs b0..b1, owner(i) = ((i + 1) G - 1) / I.
    const StreamShare sh = stream_share(e);
    Value t = e.add(e.div(sh.start, sh.k), e.zext64(iter));
    Value tk = e.mul(t, sh.k);
    Value lo = umax(e, sh.start, tk), hi = umin(e, sh.end, e.add(tk, sh.k));
    Value b0 = e.div(e.sub(e.mul(e.add(tk, e.c64(1)), sh.grid), e.c64(1)), sh.iters);
    Value b1 = e.div(e.sub(e.mul(e.add(tk, sh.k), sh.grid), e.c64(1)), sh.iters);
    Value b0_start = e.div(e.mul(b0, sh.iters), sh.grid);
    tile = to_i32(e, t);
    u.split = to_i32(e, e.sub(sh.block, b0));
    u.k_first = to_i32(e, e.sub(lo, tk));
    u.k_count = to_i32(e, e.sub(hi, lo));
    u.segments = to_i32(e, e.add(e.sub(b1, b0), e.c64(1)));
    // Slots: 2 per CTA, [2b] for its first unit and [2b + 1] for its last. Segment 0 of the
    // tile is CTA b0's last unit when b0's share began in an earlier tile; every later segment
    // is its CTA's first.
    u.slot_base = to_i32(e, e.mul(b0, e.c64(2)));
    u.slot_step = e.c32(2);
    u.first_extra = e.select(e.ult(b0_start, tk), one, zero);
  } else {
    // Data-parallel: tile t; split-K: range t % splits of tile t / splits (its k-steps are the
    // kernel's to cut: [s k / S, (s + 1) k / S)).
    Value t = e.add(first_, e.mul(iter, stride_));
    tile = splits_ ? e.div(t, splits_) : t;
    u.split = splits_ ? e.rem(t, splits_) : e.c32(0);
    if (k_steps_) {
      Value lo = splits_ ? e.div(e.mul(u.split, k_steps_), splits_) : e.c32(0);
      Value hi = splits_ ? e.div(e.mul(e.add(u.split, e.c32(1)), k_steps_), splits_) : k_steps_;
      u.k_first = lo;
      u.k_count = e.sub(hi, lo);
    }
  }
  TileCoord tc = emit_planar_snake(e, tile, m_ct_, n_ct_, minor_is_n_, band_width_);
  Value tm = e.add(e.mul(tc.m, e.c32(s_.cluster_m)), rank_m_);
  Value tn = e.add(e.mul(tc.n, e.c32(s_.cluster_n)), rank_n_);
  u.m0 = e.mul(tm, e.c32(s_.cta_tile_m));
  u.n0 = e.mul(tn, e.c32(s_.cta_tile_n));
  u.tile = tile;
  // (Made last: a constant made earlier reorders the data-parallel kernel's ops, and its PTX.)
  if (!s_.stream) u.segments = splits_ ? splits_ : e.c32(1);
  return u;
}

namespace {
// emit_planar_snake() on the host, in the same unsigned arithmetic.
std::pair<std::uint64_t, std::uint64_t> host_snake(std::uint64_t t, std::uint64_t m_ct, std::uint64_t n_ct,
                                                   bool minor_is_n, int band_width) {
  const std::uint64_t minor_tiles = minor_is_n ? n_ct : m_ct, major_tiles = minor_is_n ? m_ct : n_ct;
  const std::uint64_t w = std::min<std::uint64_t>(std::uint64_t(band_width), minor_tiles);
  const std::uint64_t band_size = w * major_tiles;
  const std::uint64_t band = t / band_size, within = t % band_size, band_start = band * w;
  const std::uint64_t bw = std::min(w, minor_tiles - band_start);
  const std::uint64_t major_step = within / bw, minor_step = within % bw;
  const std::uint64_t minor = band_start + ((major_step & 1) ? bw - 1 - minor_step : minor_step);
  const std::uint64_t major = (band & 1) ? major_tiles - 1 - major_step : major_step;
  return {minor_is_n ? major : minor, minor_is_n ? minor : major};
}
}  // namespace

std::vector<HostUnit> host_tile_walk(const TileWalkShape& s, std::int64_t m, std::int64_t n, unsigned block,
                                     unsigned grid, bool minor_is_n, int band_width) {
  // The same steps as TileWalk, in the same unsigned arithmetic.
  const std::uint64_t cs = std::uint64_t(s.cluster_size());
  const std::uint64_t m_ct = (m + std::int64_t(s.cta_tile_m) * s.cluster_m - 1) / (std::int64_t(s.cta_tile_m) * s.cluster_m);
  const std::uint64_t n_ct = (n + std::int64_t(s.cta_tile_n) * s.cluster_n - 1) / (std::int64_t(s.cta_tile_n) * s.cluster_n);
  const std::uint64_t rank = block % cs, rank_m = rank / std::uint64_t(s.cluster_n), rank_n = rank % std::uint64_t(s.cluster_n);
  const std::uint64_t k = std::uint64_t(std::max<std::int64_t>(1, s.k_steps));
  std::vector<HostUnit> out;
  auto place = [&](HostUnit u, std::uint64_t t) {
    auto [mt, nt] = host_snake(t, m_ct, n_ct, minor_is_n, band_width);
    u.m0 = std::int64_t((mt * s.cluster_m + rank_m) * s.cta_tile_m);
    u.n0 = std::int64_t((nt * s.cluster_n + rank_n) * s.cta_tile_n);
    u.tile = std::int64_t(t);
    out.push_back(u);
  };
  if (s.stream) {
    const std::uint64_t iters = m_ct * n_ct * k, g = grid, b = block;
    const std::uint64_t start = b * iters / g, end = (b + 1) * iters / g;
    if (start >= end) return out;
    for (std::uint64_t t = start / k; t <= (end - 1) / k; ++t) {
      const std::uint64_t tk = t * k, lo = std::max(start, tk), hi = std::min(end, tk + k);
      const std::uint64_t b0 = ((tk + 1) * g - 1) / iters, b1 = ((tk + k) * g - 1) / iters;
      HostUnit u;
      u.split = int(b - b0);
      u.k_first = std::int64_t(lo - tk);
      u.k_count = std::int64_t(hi - lo);
      u.segments = int(b1 - b0 + 1);
      u.slot = std::int64_t(2 * b + (b == b0 && b0 * iters / g < tk ? 1 : 0));
      place(u, t);
    }
    return out;
  }
  const std::uint64_t splits = std::uint64_t(std::max(1, s.splits));
  const std::uint64_t units = m_ct * n_ct * splits, first = block / cs, stride = grid / cs;
  const std::uint64_t count = first < units ? (units - first + stride - 1) / stride : 0;
  for (std::uint64_t it = 0; it < count; ++it) {
    const std::uint64_t unit = first + it * stride, t = unit / splits, sp = unit % splits;
    HostUnit u;
    u.split = int(sp);
    u.k_first = std::int64_t(sp * k / splits);
    u.k_count = std::int64_t((sp + 1) * k / splits) - u.k_first;
    u.segments = int(splits);
    u.slot = splits > 1 ? std::int64_t(t * splits + sp) : 0;
    place(u, t);
  }
  return out;
}

unsigned persistent_grid(std::int64_t m, std::int64_t n, const TileWalkShape& s, int sm_count) {
  return mgpu_lm_persistent_grid(m, n, std::int64_t(s.cta_tile_m) * s.cluster_m, std::int64_t(s.cta_tile_n) * s.cluster_n,
                                 s.cluster_size(), s.stream ? s.k_steps : s.splits, sm_count);
}

}  // namespace mgpu::kernels
