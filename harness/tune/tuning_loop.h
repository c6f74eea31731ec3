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
// own picks (harness/tune/warm_start.h); they count towards `trials`, and notify() says so
// when they leave the strategy nothing.
// Verification (model, and cuda with --preflight emulate): each config is proven on the virtual
// device first (harness/verify/verifier.h: once per kernel and problem class, reused from the
// store); a failure is recorded with the verdict as the trial's status and is told to the
// strategy as a failure. Every trial records its kernel hash and problem class.
// Lints (issue 19): every config the run compiles has its kernel's SASS evidence recorded in
// the store once per binary (harness/tune/evidence_collector.h, when nvdisasm is found); the
// model predicts each config with the penalties of its lints (that evidence, and the bank
// conflicts its verification counted; kernels/matmul_common/cost_model.h), and without any
// evidence as before.
// Concurrency: `trials` is the study's budget (template version, problem, device, source), shared
// by every run on the database: each trial is claimed in the database before it is measured
// (results/claims.h), so concurrent runs never exceed it nor measure a config twice. A run
// makes at most `trials` attempts itself. Trials that failed for the machine's sake
// (env_error) do not count and are tried again by a resumed run.
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
  // The strict re-timing of the top ones ends when settled, or after this many seconds
  // (< 0: a quarter of the search's time, at least 30 s).
  double confirm_budget_s = -1;
  bool compile_predicted = true;  // model: compile each config before predicting it
  std::string timer = "auto";     // cuda: auto | cupti | events
  int warm_start_shapes = 3;      // measure first the winners of this many nearest tuned shapes
  // model: verify each config on the virtual device (its kernel, at the class of `problem`)
  // before predicting it; a config that fails is recorded failed and never ranks.
  bool verify = true;
  int verify_seeds = 2;           // schedules per verification
  std::string preflight;          // cuda: "emulate" verifies the same way before a GPU runs it
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
  std::string source;       // cuda | model | replay | emulate
  std::string note;         // why the device was chosen, when not the GPU
  // What was tuned, when it is not the options' matmul problem (a T4 landscape replayed:
  // "t4:NAME"); empty: o.problem.key().
  std::string problem;
  int trials_this_run = 0, trials_resumed = 0, failed = 0;
  int env_failed = 0;       // of `failed`: the machine's fault (not counted; retried on resume)
  // Configs that passed / failed on the virtual device (emulate; model and --preflight: before
  // predicting or measuring them), and of the passed, how many by an earlier verification.
  int verified = 0, verify_failed = 0, verify_reused = 0;
  std::string unverified_why;  // model: why configs were predicted without verification
  // SASS evidence (issue 19), gathered for every config the run compiles: kernels
  // disassembled now / found in the store; configs predicted with lint penalties; and why
  // there was no SASS evidence (no nvdisasm, --no-compile), when there was none.
  int evidence_recorded = 0, evidence_reused = 0, linted = 0;
  std::string lints_unavailable_why;
  int taken_elsewhere = 0;  // configs the strategy picked that another run had claimed or measured
  // The study's budget was held by concurrent runs' claims before this run took a trial: it had
  // nothing to do (not a failure; their results land in the database as they finish).
  bool budget_taken_elsewhere = false;
  int study_trials = 0;     // the study's counted trials at the end, every run's
  double wall_s = 0;
  bool interrupted = false, exhausted = false;
  double peak_tflops = 0;
  std::vector<RankedConfig> top;  // best first; ties within noise share a rank
  double configs_per_minute = 0;  // trials of this run per minute of search, compiles and verifications included
  // The strict re-timing of the top ones (GPU only): passes begun, measurements, seconds, why it ended.
  int confirm_passes = 0, confirm_measurements = 0;
  double confirm_s = 0;
  std::string confirm_ended;
  std::vector<std::string> warm_started_from;  // problem keys whose winners were measured first
};

// The trial that just finished, for a verbose log.
struct TrialEvent {
  std::string config_json, status, message;
  double median_ms = 0;       // when ok
  double measure_ms = 0;      // wall time of measuring it (compiling too, when not done ahead)
  double compile_wait_ms = 0; // time its batch's compile-ahead kept the loop waiting
};

struct Progress {
  std::string context;  // e.g. "llama3-8b 3/16 m512_n6144_k4096_bf16_bf16_nk" in a suite
  int done = 0, target = 0;  // the study's counted trials (every run's) and its budget
  double elapsed_s = 0;
  std::optional<RankedConfig> best;
  std::optional<TrialEvent> trial;
  // The virtual device has no clock: its progress is the verdicts this run (nullopt elsewhere).
  std::optional<std::pair<int, int>> verified_failed;
};

// The checks tune() makes before touching a device or the database (arch, problem, trials,
// budget, strategy, device name and a replay: file's presence, timer): Error{InvalidInput}
// naming the problem. Campaigns
// run them when a plan is written and before its tasks are submitted.
void check_tune_options(const TuneOptions& options);

// Why --device emulate cannot run `problem` (nullopt when it can): its worker holds A, B and C on
// the virtual device (`device_bytes` of memory) and, on the host, the inputs, the float64
// reference C is checked against and C read back -- all of it in this machine's memory
// (`machine_bytes`). tune() refuses such a problem (Error{InvalidInput}) before it writes.
std::optional<std::string> why_too_big_to_emulate(const kernels::MatmulProblem& problem, double device_bytes,
                                                  double machine_bytes);
// The memory a machine must have for --device emulate to take `problem` (the device's and the
// host's part together): what a campaign asks Slurm for (sbatch --mem) for its emulate tasks.
double emulate_machine_bytes(const kernels::MatmulProblem& problem);
// The same for every problem of a suite, before the first is tuned: sets up the virtual device
// as --device emulate does and throws Error{InvalidInput} for the first problem it cannot run.
void check_emulate_problems(const TuneOptions& options, const std::vector<kernels::MatmulProblem>& problems);

TuneReport tune(const TuneOptions& options, const std::atomic<bool>& interrupted,
                const std::function<void(const Progress&)>& on_progress = {});

}  // namespace mgpu::harness
