// What measuring one config yields, whatever measured it. Contract: `status` says how the
// trial ended (ok, or which stage failed); timing fields are meaningful only when ok;
// `source` is "cuda" (timed on a GPU), "model" (predicted) or "replay" (read back from a
// results database), and travels with the numbers wherever they are stored or printed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mgpu::harness {

// EnvError: the machine, not the config, failed (no assembler, an unwritable folder, ...):
// such a trial is kept for the record but never counts as the config's result, and a resumed
// run tries the config again.
// Hazard: the virtual device's checkers found a synchronization error (the result may even be right).
// Deadlock: on the virtual device every thread waited with nothing in flight to wake one (or
// a spin made no progress). Unsupported: the kernel uses an instruction the virtual device
// does not implement: no verdict about the kernel.
enum class TrialStatus { Ok, CompileError, LaunchError, Fault, Timeout, WrongResult, InvalidConfig, EnvError, Hazard,
                         Deadlock, Unsupported };
std::string_view to_string(TrialStatus s);
TrialStatus parse_trial_status(std::string_view s);  // throws core::Error{InvalidInput}

struct Measurement {
  TrialStatus status = TrialStatus::Ok;
  std::string source;          // "cuda" | "model" | "replay" | "emulate"
  std::string message;         // why, when not ok
  std::vector<double> samples_ms;
  double median_ms = 0, min_ms = 0, mean_ms = 0;
  double noise = 0;            // relative standard deviation of the samples
  bool noise_converged = false;  // stopped on the noise bound (not on the time limit)
  double sm_clock_mhz_before = 0, sm_clock_mhz_after = 0;
  bool throttled = false;
  std::string timer;           // "cupti" (GPU timestamps) | "events" (CUDA events); measured trials
  std::optional<double> verification_error;  // relative Frobenius error vs the reference
  std::string kernel_hash;     // core::kernel_hash of the kernel compiled for the trial, if any
};

void to_json(nlohmann::json& j, const Measurement& m);
void from_json(const nlohmann::json& j, Measurement& m);

}  // namespace mgpu::harness
