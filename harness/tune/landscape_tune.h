// Tuning against a T4 file (`--device replay:FILE` where FILE is T4, plain or .gz, not one of
// our databases): the space is the file's, not the matmul template's -- its parameters and
// values as recorded, every recorded configuration a candidate -- and each trial is answered
// with the recorded median runtime (failed configurations as failures, their T4 invalidity in
// the message). --time-budget is simulated: it is spent by the recorded compile + benchmark
// times of the configurations evaluated, not by the clock. Trials are stored (source "replay")
// under template "t4:<file name>", problem "t4", device "replay:<file name>"; a resumed run
// tells the strategy what the study already has and does not evaluate it again.
// Contract: as tune() (harness/tune/tuning_loop.h) for trials, seed, strategy, db and top;
// the same seed gives the same trials. The matmul problem and arch options are ignored.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "harness/tune/tuning_loop.h"

namespace mgpu::harness {

// True for "replay:FILE" where FILE exists and is not an SQLite database.
bool is_t4_replay(const std::string& device);
TuneReport tune_landscape(const TuneOptions& options, const std::atomic<bool>& interrupted,
                          const std::function<void(const Progress&)>& on_progress = {});

}  // namespace mgpu::harness
