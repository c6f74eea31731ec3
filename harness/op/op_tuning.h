// Tuning one problem of an op that speaks kernels/op_template.h: the template's valid configs
// searched by a strategy (search/strategy.h), each proven on the virtual device at the op's
// verification problems before the cost model predicts it or a GPU times it, every outcome a
// trial in the results database. Op-neutral: nothing here names an op.
//
// Contract: as the matmul tuner -- a study (template version, problem, device name, source) is
// shared with earlier and concurrent runs through claims (results/claims.h), so a resumed run
// measures only what is missing and --trials counts every run's configs; a config whose
// verification failed is recorded as failed (its status, and the class and finding in the
// message) and never ranks; a stop request ends the run after the trial under way, its trials
// committed. Verification is keyed by (config, kernel hash, class): the op's verification
// problems build the same binary as the problem tuned, and an earlier verdict is reused. Trials
// at the tuned problem carry the classes joined by ';' (results/store.h verification_classes()).
// Throws Error{InvalidInput} for options that cannot work, before the database is written.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "kernels/op_template.h"

namespace mgpu::harness {

struct OpTuneOptions {
  std::string op;
  std::string arch = "sm_90a";
  kernels::Problem problem;
  std::string strategy = "model";
  int trials = 0;  // 0: every valid config
  std::string db = "mgpu-tune.db";
  std::string device = "auto";  // auto | model | emulate | cuda
  std::uint64_t seed = 0;
  bool verify = true;
  int verify_seeds = 2;
  std::string timer = "auto";
  std::string arguments;
  std::function<void(const std::string&)> notify;
  // More problems that must fit the virtual device (a suite's, checked before its first runs).
  std::vector<kernels::Problem> also_fits;
};

struct OpTrialLine {  // one trial as it finished (or, `running` set, as a long one starts), for progress
  int index = 0, budget = 0;
  core::TuningConfig config;
  std::string status;       // ok, or the failing status
  std::string message;
  std::optional<double> ms;
  std::string verification;  // "verified at N classes (M reused)", "failed at CLASS", "" when not verified
  std::string running;       // non-empty: the trial is starting, and this says what it does
};

struct OpTuneReport {
  std::string run_uuid, source, note, device_name, template_name;
  std::uint64_t space_size = 0, valid = 0;
  int trials_this_run = 0, trials_resumed = 0, failed = 0, env_failed = 0;
  int verified = 0, verify_failed = 0, verify_reused = 0;
  std::string unverified_why;
  bool interrupted = false, exhausted = false;
  struct Ranked {
    core::TuningConfig config;
    double ms = 0, tflops = 0;
  };
  std::vector<Ranked> top;  // best first
};

// The memory a machine must have for --device emulate to take `problem`: the virtual device's
// buffers and the reference's float64 copies, with as much again to spare. tune_op refuses a
// problem over this machine's; a campaign asks Slurm for it (sbatch --mem) for its emulate tasks.
double op_emulate_machine_bytes(const kernels::Problem& problem);

OpTuneReport tune_op(const OpTuneOptions& o, const std::atomic<bool>& interrupted,
                     const std::function<void(const OpTrialLine&)>& on_trial);

}  // namespace mgpu::harness
