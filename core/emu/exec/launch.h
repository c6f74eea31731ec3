// Running a kernel launch on the virtual device: its clusters resident as the hardware would
// hold them when the kernel can wait for another cluster (at most (SMs / cluster size) x
// resident CTAs per SM at once, the next starting when one exits), else one resident window at
// a time in a seeded order (launch.cc, run_launch); the resident clusters' warps interleaved by
// a seeded scheduler that also chooses when in-flight async operations are performed.
// Contract: run_launch() returns normally when every thread exited; it throws Fault for a
// fatal report (deadlock, out-of-bounds, unsupported instruction, the step limit of one
// cluster). Hazards found on the way are in Launch::reports.
#pragma once

#include "core/emu/exec/state.h"

namespace mgpu::emu {

inline constexpr std::uint32_t kMaxSharedPerBlock = 227 * 1024;  // sm_90 opt-in maximum

void run_launch(Launch& L);

}  // namespace mgpu::emu
