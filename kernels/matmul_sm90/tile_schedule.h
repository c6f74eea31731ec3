// The persistent kernel's tile order: a planar snake over the (m_tiles x n_tiles) grid of
// output tiles. Tiles are taken in bands `band_width` tiles wide across the minor dimension;
// a band is walked along the major dimension, and the walk turns back at every step (minor
// index reversed on odd major steps) and at every band (major index reversed on odd bands),
// so consecutive tiles share operand tiles in L2. Contract: for every linear index in
// [0, m_tiles * n_tiles) emit_planar_snake() yields a distinct (m, n) inside the grid -- each
// tile exactly once (proven on the CPU by running this same builder through the MLIR JIT).
// All values are i32; minor_is_n is 0 or 1. The parameters are run-time values, so the
// kernel's binary does not depend on them: tuning grid_minor_dim and grid_tile_width costs no
// compile.
#pragma once

#include "core/ir/emitter.h"

namespace mgpu::kernels::sm90 {

struct TileCoord {
  mlir::Value m;
  mlir::Value n;
};

TileCoord emit_planar_snake(core::ir::Emitter& e, mlir::Value linear, mlir::Value m_tiles, mlir::Value n_tiles,
                            mlir::Value minor_is_n, mlir::Value band_width);

}  // namespace mgpu::kernels::sm90
