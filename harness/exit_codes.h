// The one exit-code table of every mgpu-tune command, mgpu-bench and the scripts/ (README
// "Exit codes"; kExitCodesHelp is the footer of every --help). Contract: a command ends with
// exactly one of these; core::exit_code_for() maps errors onto 1 and 2, and the codes below
// are returned by the commands that can end that way.
#pragma once

#include "core/error.h"

namespace mgpu::harness {

using core::kExitBadInput;  // 2: bad input (flags, files, values): nothing was done
using core::kExitFailure;   // 1: the work failed (a benchmark failed, a regression was found)
using core::kExitOk;        // 0: success

inline constexpr int kExitNothingMeasured = 3;  // no GPU for the work (or only predictions): no verdict
inline constexpr int kExitNoVerdict = 4;        // measured, but too noisy or nothing in common to judge
inline constexpr int kExitHangup = 129;         // SIGHUP: committed what finished, then stopped
inline constexpr int kExitInterrupted = 130;    // SIGINT (Ctrl-C): likewise
inline constexpr int kExitTerminated = 143;     // SIGTERM (Slurm and CI time limits): likewise

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 success; 1 the work failed (a trial or benchmark failed, a regression was found);\n"
    "  2 bad input (nothing was done); 3 nothing could be measured (no GPU for it, or only\n"
    "  predictions: no verdict); 4 no verdict (too noisy, or nothing in common to compare);\n"
    "  129/130/143 stopped by SIGHUP/Ctrl-C/SIGTERM after committing what had finished.";

}  // namespace mgpu::harness
