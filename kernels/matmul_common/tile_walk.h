// The persistent matmul kernels' tile order, shared by every matmul template. Output tiles are
// grouped into cluster tiles (the CTAs of a cluster compute neighbouring CTA tiles); clusters
// take cluster tiles in planar-snake order, strided by the number of clusters in the grid.
//
// emit_planar_snake(): tiles are taken in bands `band_width` tiles wide across the minor
// dimension; a band is walked along the major dimension, and the walk turns back at every
// step (minor index reversed on odd major steps) and at every band (major index reversed on
// odd bands), so consecutive tiles share operand tiles in L2. For every linear index in
// [0, m_tiles * n_tiles) it yields a distinct (m, n) inside the grid.
//
// TileWalk: what one CTA computes -- count() work units, the iter-th a tile at origin(iter)
// (element offsets of its CTA tile) and a range of its K steps. Every output element is covered
// exactly once over all CTAs of the grid (proven on the CPU by running this same builder
// through the MLIR JIT). Three decompositions of the work:
//   - data-parallel: a unit is a whole tile (all k-steps); CTAs stride over the tiles;
//   - split-K (`splits` >= 2 ranges per tile): unit u is range u % splits of the u / splits-th
//     tile, tile-major, so the ranges of a tile run side by side on consecutive CTAs; range s
//     is the steps [s k / splits, (s + 1) k / splits);
//   - stream-K (shape.stream, built in): the tiles' k-steps laid end to end are I = tiles x k
//     iterations, and CTA b takes [b I / G, (b + 1) I / G) of them (G CTAs, unclustered), cut
//     at tile boundaries into units: every CTA does the same work within one k-step, whatever
//     the tile count. A tile is then covered by `segments` consecutive CTAs' units.
// With split-K and stream-K a unit that is not its tile's only segment leaves an f32 partial in
// a workspace slot; slot(j) names the slot of the tile's j-th segment (split-K: tile x splits +
// j; stream-K: 2 per CTA, for the CTA's first and last unit), so whichever segment finishes
// last can sum them in segment order.
// All values are i32; M, N, minor_is_n and band_width are run-time values, so the kernel's
// binary does not depend on them: tuning grid_minor_dim and grid_tile_width costs no compile.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/ir/emitter.h"

namespace mgpu::kernels {

struct TileCoord {
  mlir::Value m;
  mlir::Value n;
};

TileCoord emit_planar_snake(core::ir::Emitter& e, mlir::Value linear, mlir::Value m_tiles, mlir::Value n_tiles,
                            mlir::Value minor_is_n, mlir::Value band_width);

// A CTA's output tile, and how the CTAs of a cluster sit in a cluster tile: cluster_m x
// cluster_n CTA tiles, CTA rank r at (r / cluster_n, r % cluster_n).
struct TileWalkShape {
  int cta_tile_m = 128;
  int cta_tile_n = 128;
  int cluster_m = 1;
  int cluster_n = 1;
  int splits = 1;  // K ranges per tile (split-K; only unclustered)
  bool stream = false;        // stream-K (unclustered; splits is then ignored)
  std::int64_t k_steps = 1;   // the problem's k-steps per tile (the host walk's K ranges)
  int cluster_size() const { return cluster_m * cluster_n; }
};

// One work unit of a CTA: its tile's origin, the tile's linear index in the walk (a dense id
// in [0, tiles), for per-tile counters), its k-steps [k_first, k_first + k_count), and which of
// the tile's `segments` units it is (`split`). Without a K decomposition split is 0 and
// segments 1; k_first / k_count are null when the walk was not given the k-step count.
struct WorkUnit {
  mlir::Value m0, n0, split, tile;
  mlir::Value k_first, k_count, segments;
  // Stream-K: slot(j) = slot_base + j slot_step (+ first_extra for j = 0); split-K (slot_step
  // null): tile x segments + j.
  mlir::Value slot_base, slot_step, first_extra;
  mlir::Value slot(core::ir::Emitter& e, mlir::Value j) const;
};

class TileWalk {
 public:
  // block / grid: blockIdx.x and gridDim.x (grid a multiple of the cluster size); cta_rank:
  // the CTA's rank in its cluster. `splits`: null for data-parallel walks, else the run-time
  // count of K ranges per tile (shape.splits is the host's value and is not read here).
  // shape.stream builds the stream-K walk (splits unused). `k_steps`: the problem's k-steps
  // (needed with splits and stream-K; without it units carry no K range).
  TileWalk(core::ir::Emitter& e, const TileWalkShape& shape, mlir::Value M, mlir::Value N, mlir::Value block,
           mlir::Value grid, mlir::Value cta_rank, mlir::Value minor_is_n, mlir::Value band_width,
           mlir::Value splits = {}, mlir::Value k_steps = {});
  mlir::Value count() const { return count_; }
  std::pair<mlir::Value, mlir::Value> origin(core::ir::Emitter& e, mlir::Value iter) const;
  WorkUnit unit(core::ir::Emitter& e, mlir::Value iter) const;
  mlir::Value tiles() const { return tiles_; }  // cluster tiles in the grid

 private:
  TileWalkShape s_;
  mlir::Value m_ct_, n_ct_, first_, stride_, count_, rank_m_, rank_n_, minor_is_n_, band_width_, splits_, tiles_;
  mlir::Value k_steps_;
  // Stream-K's share of CTA `first_` of `stride_` (cluster size 1), in 64 bits.
  struct StreamShare {
    mlir::Value k, iters, grid, block, start, end;
  };
  StreamShare stream_share(core::ir::Emitter& e) const;
};

// The host's copy of TileWalk, for the CTA `block` of a `grid`-CTA launch (its cluster rank
// block % cluster size): the work units it computes, in order. Tests hold it to the emitted
// walk, JIT-run, for every walk shape, grid, order, band width, split count and stream-K.
struct HostUnit {
  std::int64_t m0 = 0, n0 = 0;
  int split = 0;                       // the unit's segment index in its tile
  std::int64_t k_first = 0, k_count = 0;
  int segments = 1;                    // units covering the tile
  std::int64_t slot = 0;               // its partial's workspace slot (when segments > 1)
  std::int64_t tile = 0;               // the tile's linear index in the walk
};
std::vector<HostUnit> host_tile_walk(const TileWalkShape& s, std::int64_t m, std::int64_t n, unsigned block,
                                     unsigned grid, bool minor_is_n, int band_width);

// Persistent grid: as many whole clusters as fit on `sm_count` SMs, no more than there are
// work units (cluster tiles x splits; with stream-K, tiles x k-steps), at least one.
unsigned persistent_grid(std::int64_t m, std::int64_t n, const TileWalkShape& s, int sm_count);

}  // namespace mgpu::kernels
