// Running one warp: pick the lanes at the lowest runnable pc (lanes at one pc run as one
// group, which is how a converged warp runs and how divergent paths reconverge), apply the
// guard, call the handler, advance. Contract: step_warp() runs at most `budget` instructions
// and returns false when no lane of the warp can run now (all exited or waiting).
#pragma once

#include <cstdint>

#include "core/emu/exec/state.h"

namespace mgpu::emu {

bool lane_can_run(Warp& w, int lane);
bool warp_can_run(Warp& w);
bool step_warp(Warp& w, int budget);

// For handlers of collective instructions (.sync.aligned, shfl.sync, elect.sync, ...): true
// when every live lane of `members` is in `mask`; otherwise the lanes in `mask` wait at this
// pc for the others (a warp reconverges before a collective) and the handler returns Block.
bool gather(Warp& w, std::uint32_t mask, std::uint32_t members);

// A describing line of what a waiting lane waits for (deadlock reports).
std::string describe_wait(Warp& w, int lane);

}  // namespace mgpu::emu
