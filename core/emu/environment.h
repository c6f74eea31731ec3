// The virtual device's environment knobs, read strictly: a value that is not one the knob takes
// throws std::invalid_argument naming the variable and what it takes. A typo must not fall back
// to the default -- MGPU_EMU_RACES=yes silently verifying without the race detector would be a
// verification that claims more than it checked.
//   MGPU_EMU_SEED        scheduler seed, a whole number (default 1)
//   MGPU_EMU_RACES       1: data-race detection (check/race_detector.h, check/memory_model.h); 0 or unset: off
//   MGPU_EMU_REPORTS     stderr (default) or off: where findings are printed
//   MGPU_EMU_STEP_LIMIT  warp-instructions a cluster may run before a step-limit finding
//                        (default kDefaultStepLimit, exec/state.h), at least 1
#pragma once

#include <cstdint>

namespace mgpu::emu {

std::uint64_t seed_from_environment();
bool races_from_environment();
bool print_reports_from_environment();
std::uint64_t step_limit_from_environment();
std::uint64_t default_step_limit();  // kDefaultStepLimit: a finding under a lower limit says less
// All of the above, so that a command can refuse a bad value before it starts any work.
void check_environment();

}  // namespace mgpu::emu
