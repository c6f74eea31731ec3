// The PTX's own main loop: the innermost natural loop of its control-flow graph (a back edge
// to a block that dominates it, and the blocks that reach it) that holds a wgmma.mma_async. Its wgmma.fence and wgmma.wait_group count is what the template asked for
// there (one fence and one wait for a pipelined matmul k-step; two of each for an attention KV
// step, whose softmax needs S before P.V can issue); the SASS's WARPGROUP.ARRIVE/DEPBAR beyond
// that count are what the assembler added. Labels may repeat in nested `{ }` scopes (inline
// asm's wait loops): a branch goes to its own scope's, else an enclosing one's. Contract: pure;
// found is false when no loop holds a wgmma.
#pragma once

#include <string_view>

namespace mgpu::core {

struct PtxMainLoop {
  bool found = false;
  int warpgroup_sync = 0;  // wgmma.fence + wgmma.wait_group lines in the loop
  int mma = 0;             // wgmma.mma_async lines in the loop
};

PtxMainLoop ptx_main_loop(std::string_view ptx);

}  // namespace mgpu::core
