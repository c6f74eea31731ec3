// Proving configs on the virtual device before they are ranked. A verification is keyed by the
// compiled kernel (its content hash), its run-time parameters (the config) and the class of
// problem (kernels/problem_class.h): a config is run once per class, at the cheapest problem
// of that class (the proxy), under `seeds` schedules, against a float64 CPU reference; every
// outcome is a trial (source 'emulate', kernel_hash and problem_class set) in the store, so a
// later run -- verify, or a tuning run about to predict the config -- reuses it, and a changed
// kernel (another hash) is verified afresh. Contract: plan() compiles (through the compile
// cache) and classifies; run() answers each job from the store or runs it in a worker process
// (a crash or hang there is the config's verdict, never the caller's), `jobs` at a time.
// Thread-safe for run()'s workers: store writes are serialised here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "harness/measure/measurement.h"
#include "kernels/matmul_template.h"
#include "kernels/problem_class.h"
#include "results/store.h"

namespace mgpu::harness {

class WorkerProcess;

struct VerifyJob {
  core::TuningConfig config;
  kernels::MatmulProblem target;  // the problem the class was taken from
  kernels::ProblemClass problem_class;
  std::optional<kernels::ProxyProblem> proxy;  // nullopt: the class has no problem small enough
  std::string kernel_hash;                     // empty: the kernel did not compile
  std::string compile_error;
  bool compile_env_error = false;  // the machine failed the compile (no temporary file, no tool), not the config
};

struct VerifyResult {
  VerifyJob job;
  bool reused = false;     // answered by an earlier verification in the store
  std::string status;      // "verified", or the failing status (wrong_result, hazard, deadlock, ...)
  std::string message;     // the checker's report / the error
  std::optional<double> verification_error;
  double wall_s = 0;       // this run's time for it (0 when reused)
  // Not run: the verdict of this config, which runs the same work as the one named here (same
  // binary, proxy problem and launch signature, MatmulTemplate::launch_signature).
  std::string equivalent_to;
  bool passed() const { return status == "verified"; }
};

class Verifier {
 public:
  // `worker_environment`: what the virtual-device workers run with (virtual_device_environment()).
  Verifier(results::Store& store, std::int64_t run_id, const kernels::MatmulTemplate& t, results::Environment env,
           int seeds, std::vector<std::string> worker_environment);
  ~Verifier();
  // plan() stops compiling when this is set (the jobs left get a compile error saying so).
  void stop_on(const std::atomic<bool>& interrupted) { interrupted_ = &interrupted; }

  // One job per (config, target): the config's kernel compiled for the target's dtypes and
  // layout (compile_threads at once), the target's class for a grid of `sm_count` SMs, its proxy.
  std::vector<VerifyJob> plan(const std::vector<core::TuningConfig>& configs,
                              const std::vector<kernels::MatmulProblem>& targets, int sm_count, int compile_threads);
  // The same for the standard classes (kernels::standard_classes) instead of targets.
  std::vector<VerifyJob> plan_standard(const std::vector<core::TuningConfig>& configs,
                                       const kernels::MatmulProblem& like, int compile_threads);

  // Answers every job; `on_result` is called as each finishes (from worker threads, one at a
  // time). Stops starting jobs when `interrupted`; unstarted jobs get no result. Jobs whose
  // configs differ only in run-time parameters and launch the same work at their proxy run once:
  // the others take that verdict (recorded as theirs, equivalent_to set).
  std::vector<VerifyResult> run(const std::vector<VerifyJob>& jobs, int parallel, const std::atomic<bool>& interrupted,
                                const std::function<void(const VerifyResult&)>& on_result);

  // One config at the class `target` has for a grid of `sm_count` SMs, answered from the store
  // or run in this verifier's own worker (kept between calls, as a tuning loop needs).
  VerifyResult verify(const core::TuningConfig& config, const kernels::MatmulProblem& target, int sm_count,
                      const std::atomic<bool>& interrupted);

 private:
  struct Compiled;
  std::vector<Compiled> compile(const std::vector<core::TuningConfig>& configs, const kernels::MatmulProblem& like,
                                int threads);
  VerifyResult answer(const VerifyJob& job, WorkerProcess& worker, const std::atomic<bool>& interrupted);
  // The verdict of `job`, which runs the same work as `ran` (whose verdict is `verdict`).
  VerifyResult answer_by_equivalence(const VerifyJob& job, const VerifyJob& ran, const VerifyResult& verdict);
  // An earlier verification of the job's config, kernel and class in the store, into `r` (reused).
  bool from_store(const VerifyJob& job, VerifyResult& r);
  // The work a job's run does: equal keys, equal runs (empty: the job does not run).
  std::string work_key(const VerifyJob& job) const;
  void record(const VerifyJob& job, const Measurement& m, const kernels::MatmulProblem& problem);

  results::Store& store_;
  std::int64_t run_id_;
  const kernels::MatmulTemplate& t_;
  results::Environment env_;
  int seeds_;
  std::vector<std::string> worker_environment_;
  const std::atomic<bool>* interrupted_ = nullptr;
  std::mutex store_mu_;
  std::mutex proxy_mu_;
  std::map<std::string, std::optional<kernels::ProxyProblem>> proxies_;
  std::unique_ptr<WorkerProcess> worker_;  // by kernel shape, dtypes and class
};

}  // namespace mgpu::harness
