// The tuning loop: template, strategy, measurer and store tied together -- the main job.
// Contract: tune() measures configs the strategy asks for until `trials` configs have results
// for this template version, problem and device (earlier runs included: a killed run resumes
// without repeating a trial), the time budget runs out, the space is exhausted, or
// `interrupted` turns true (Ctrl-C); every trial is committed to the store as it finishes.
// Device "auto" measures on a GPU of the requested arch when there is one (in a worker
// process, compiling each batch ahead on every core, the top few re-measured strictly at the
// end) and otherwise predicts with the cost model, saying so; "model" predicts; "replay:DB"
// answers from an existing results database; "cuda" requires a GPU (bad input without one).
// Warm start: the winners of the `warm_start_shapes` nearest shapes this database already
// tuned (same template version, device, dtypes, layout) are measured before the strategy's
// own picks (harness/tune/warm_start.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "kernels/matmul_problem.h"

namespace mgpu::harness {

struct TuneOptions {
  std::string arch = "sm_90a";
  kernels::MatmulProblem problem;
  std::string strategy = "tpe";
  int trials = 100;
  double time_budget_s = 0;  // 0: none
  std::string db = "mgpu-tune.db";
  std::string device = "auto";
  std::uint64_t seed = 0;
  int top = 3;  // re-measured strictly at the end (measured results only)
  bool compile_predicted = true;  // model: compile each config before predicting it
  std::string timer = "auto";     // cuda: auto | cupti | events
  int warm_start_shapes = 3;      // measure first the winners of this many nearest tuned shapes
  std::string arguments;  // the command line, for the run's provenance
  std::function<void(const std::string&)> notify;  // told why a device was chosen, up front
};

struct RankedConfig {
  core::TuningConfig config;
  double median_ms = 0;
  double noise = 0;
  double tflops = 0;
};

struct TuneReport {
  std::string run_uuid;
  std::string device_name;  // as stored; "model:..." for predictions
  std::string source;       // cuda | model | replay
  std::string note;         // why the device was chosen, when not the GPU
  int trials_this_run = 0, trials_resumed = 0, failed = 0;
  double wall_s = 0;
  bool interrupted = false, exhausted = false;
  double peak_tflops = 0;
  std::vector<RankedConfig> top;  // best first; ties within noise share a rank
  std::vector<std::string> warm_started_from;  // problem keys whose winners were measured first
};

struct Progress {
  std::string context;  // e.g. "llama3-8b 3/16 m512_n6144_k4096_bf16_bf16_nk" in a suite
  int done = 0, target = 0;
  double elapsed_s = 0;
  std::optional<RankedConfig> best;
};

// The checks tune() makes before touching a device or the database (arch, problem, trials,
// budget, strategy, device name, timer): Error{InvalidInput} naming the problem. Campaigns
// run them when a plan is written and before its tasks are submitted.
void check_tune_options(const TuneOptions& options);

TuneReport tune(const TuneOptions& options, const std::atomic<bool>& interrupted,
                const std::function<void(const Progress&)>& on_progress = {});

}  // namespace mgpu::harness
