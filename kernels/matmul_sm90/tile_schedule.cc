#include "kernels/matmul_sm90/tile_schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mgpu::kernels::sm90 {

using mlir::Value;

TileCoord emit_planar_snake(core::ir::Emitter& e, Value t, Value m_tiles, Value n_tiles, Value minor_is_n,
                            Value band_width) {
  auto select = [&](Value c, Value a, Value b) { return mlir::arith::SelectOp::create(e.b, e.loc, c, a, b); };
  auto minu = [&](Value a, Value b) { return mlir::arith::MinUIOp::create(e.b, e.loc, a, b); };
  Value one = e.c32(1);
  Value is_n = e.eq(minor_is_n, one);
  Value minor_tiles = select(is_n, n_tiles, m_tiles);
  Value major_tiles = select(is_n, m_tiles, n_tiles);
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
  Value minor = e.add(band_start, select(odd_step, e.sub(e.sub(bw, one), minor_step), minor_step));
  Value odd_band = e.eq(e.bit_and(band, one), one);
  Value major = select(odd_band, e.sub(e.sub(major_tiles, one), major_step), major_step);
  return {select(is_n, major, minor), select(is_n, minor, major)};
}

}  // namespace mgpu::kernels::sm90
