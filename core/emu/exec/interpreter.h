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
// `orders_memory`: the collective also orders memory among its participants (the race
// detector joins their clocks) -- bar.warp.sync only (PTX ISA 9.7.13.2); no other warp
// collective promises it, and the warp is not a scope (8.5).
bool gather(Warp& w, std::uint32_t mask, std::uint32_t members, bool orders_memory = false);

// The mbarrier at `offset` of `owner` just completed a phase (its phase count is now `phase`):
// a lane still blocked on it whose wait the previous completion had satisfied never observed
// that phase and now waits for one that may never come (PTX ISA 9.7.13.15.16: a waiter must see
// the phase it waits for before the barrier completes the next one). Reported as misuse.
void report_missed_phase(Cta& owner, std::uint32_t offset, std::uint64_t phase, const Where& where);

// After any update of the mbarrier `bar` at `offset` of `owner` (arrive, complete-tx): when it
// completed a phase (its phase count moved past `phase_before`), hands the arrivals' clocks to
// the race detector and checks for waiters that missed the previous phase. Returns whether a
// phase completed.
bool after_mbarrier_update(Cta& owner, std::uint32_t offset, const MBarrier& bar, std::uint64_t phase_before,
                           const Where& where);

// mbarrier.test_wait never blocks (PTX ISA 9.7.13.15.16: test_wait is non-blocking; only
// try_wait may suspend the thread), so a warp polling it in a loop can always run, and a
// scheduler that lands async operations only when no warp can run would never land the one it
// polls for. note_poll() records each test_wait's outcome; spinning() is true while the warp's
// last two failed polls were the same one (pc, mbarrier, parity or state) and it has run at
// most kSpinWindow instructions since: such a warp makes no progress until something else
// changes the barrier. A single failed poll does not count, so a kernel that tests once and
// goes on still sees async operations land as late as legal.
inline constexpr std::uint64_t kSpinWindow = 32;
void note_poll(Warp& w, std::uint32_t pc, std::uint32_t object, std::uint64_t value, bool done);
bool spinning(const Warp& w);

// A describing line of what a waiting lane waits for (deadlock reports).
std::string describe_wait(Warp& w, int lane);

}  // namespace mgpu::emu
