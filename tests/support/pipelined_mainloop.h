// A representative Hopper kernel for compile tests and benchmarks: a warp-specialized,
// `stages`-deep TMA -> wgmma mainloop (one producer warpgroup, two consumer warpgroups of
// m64 x tile_n each) that writes its f32 accumulators to global memory. It is not the tuned
// matmul template (kernels/), but exercises every primitive that template will.
#pragma once

#include <string>

namespace mgpu::testing {

std::string pipelined_mainloop_mlir(int tile_n, int stages, int k_steps);

}  // namespace mgpu::testing
