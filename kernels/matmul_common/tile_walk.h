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
// TileWalk: what one CTA computes -- count() tiles, the iter-th at origin(iter) (element
// offsets of its CTA tile). Every output element is covered exactly once over all CTAs of
// the grid (proven on the CPU by running this same builder through the MLIR JIT). With
// `splits` ranges per tile (split-K), the walk is over work units, tile-major: unit u is range
// u % splits of the u / splits-th tile in planar-snake order, so the ranges of a tile run side
// by side on consecutive CTAs; every (tile, range) is covered exactly once.
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
  int cluster_size() const { return cluster_m * cluster_n; }
};

// One work unit of a CTA: its tile's origin, which K range of the tile, and the tile's linear
// index in the walk (a dense id in [0, tiles), for per-tile workspace).
struct WorkUnit {
  mlir::Value m0, n0, split, tile;
};

class TileWalk {
 public:
  // block / grid: blockIdx.x and gridDim.x (grid a multiple of the cluster size); cta_rank:
  // the CTA's rank in its cluster. `splits`: the run-time count of K ranges per tile (null: 1;
  // shape.splits is the host's value and is not read here).
  TileWalk(core::ir::Emitter& e, const TileWalkShape& shape, mlir::Value M, mlir::Value N, mlir::Value block,
           mlir::Value grid, mlir::Value cta_rank, mlir::Value minor_is_n, mlir::Value band_width,
           mlir::Value splits = {});
  mlir::Value count() const { return count_; }
  std::pair<mlir::Value, mlir::Value> origin(core::ir::Emitter& e, mlir::Value iter) const;
  WorkUnit unit(core::ir::Emitter& e, mlir::Value iter) const;
  mlir::Value tiles() const { return tiles_; }  // cluster tiles in the grid

 private:
  TileWalkShape s_;
  mlir::Value m_ct_, n_ct_, first_, stride_, count_, rank_m_, rank_n_, minor_is_n_, band_width_, splits_, tiles_;
};

// The host's copy of TileWalk, for the CTA `block` of a `grid`-CTA launch (its cluster rank
// block % cluster size): the work units it computes, in order (origins and K ranges; the
// range is 0 without splits). Tests hold it to the emitted walk, JIT-run, for every walk
// shape, grid, order, band width and split count.
struct HostUnit {
  std::int64_t m0 = 0, n0 = 0;
  int split = 0;
};
std::vector<HostUnit> host_tile_walk(const TileWalkShape& s, std::int64_t m, std::int64_t n, unsigned block,
                                     unsigned grid, bool minor_is_n, int band_width);

// Persistent grid: as many whole clusters as fit on `sm_count` SMs, no more than there are
// work units (cluster tiles x splits), at least one.
unsigned persistent_grid(std::int64_t m, std::int64_t n, const TileWalkShape& s, int sm_count);

}  // namespace mgpu::kernels
