// Runs the kernels' own TileWalk builder (kernels/matmul_common/tile_walk.h) on the CPU,
// JIT-compiled with MLIR's ExecutionEngine, so the coverage tests check the very index math a
// CTA executes -- grid, cluster rank and all -- for one template's walk shape.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/matmul_common/tile_walk.h"

namespace mgpu::testing {

struct WalkArgs {
  std::int32_t m = 0, n = 0, block = 0, grid = 1, rank = 0, minor_is_n = 1, band_width = 1;
  std::int32_t splits = 1;  // read only when the walk shape has splits > 1 (a run-time value, as in the kernel)
  std::int32_t k_steps = 1;
};

class JitTileWalk {
 public:
  explicit JitTileWalk(const kernels::TileWalkShape& shape);
  ~JitTileWalk();
  std::int32_t count(const WalkArgs& a) const;
  std::pair<std::int32_t, std::int32_t> origin(const WalkArgs& a, std::int32_t iter) const;  // (m0, n0)
  kernels::HostUnit unit(const WalkArgs& a, std::int32_t iter) const;                         // with its K range

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mgpu::testing
