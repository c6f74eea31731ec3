// Running a kernel launch on the virtual device: clusters one after another (each to
// completion, in a seeded order), and within a cluster every warp of every CTA interleaved by
// a seeded scheduler that also chooses when in-flight async operations are performed.
// Contract: run_launch() returns normally when every thread exited; it throws Fault for a
// fatal report (deadlock, out-of-bounds, unsupported instruction, step limit). Hazards found
// on the way are in Launch::reports.
#pragma once

#include "core/emu/exec/state.h"

namespace mgpu::emu {

inline constexpr std::uint32_t kMaxSharedPerBlock = 227 * 1024;  // sm_90 opt-in maximum

void run_launch(Launch& L);

}  // namespace mgpu::emu
