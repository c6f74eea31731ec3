// Proving an op's configs on the virtual device (kernels/op_template.h): a config runs once at
// each of the op's verification problems, in a worker process (a crash or hang there is the
// config's verdict), under `seeds` schedules, checked by the race, hazard and deadlock
// checkers and against the op's CPU reference. Every outcome is a trial (source 'emulate',
// the class in problem_class, the kernel's hash) in the store, and an earlier verdict for the
// same (config, kernel hash, class) is reused instead of run again -- a pass only when it ran
// under at least `seeds` schedules.
// Contract: prove() returns the verdict of the first class that failed, or passed; the
// verification problems must build the kernel the tuned problem builds (a class whose kernel
// hash differs is an env_error: no verdict). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "harness/measure/worker.h"
#include "kernels/op_template.h"
#include "results/store.h"

namespace mgpu::harness {

struct OpProof {
  bool ok = true;
  std::string status = "ok";  // the failing trial's status (wrong_result, hazard, deadlock, ...)
  std::string message;        // for a failure: the class, its problem and the finding
  std::string failed_class;
  int ran = 0, reused = 0;    // classes run now / answered by the store
  double wall_s = 0;
};

class OpProver {
 public:
  // `worker_environment`: what the workers run with (virtual_device_environment(), which
  // callers ask for before they write anything: it throws when the library is missing).
  // `sm_count`: the SMs of the device the configs are proven for (their verification problems
  // may depend on it: OpTemplate::verification_problems()).
  OpProver(results::Store& store, std::int64_t run, const kernels::OpTemplate& t, int seeds,
           std::vector<std::string> worker_environment, int sm_count);
  // The kernel hash of a config's kernel at `p`, compiled through the cache. Throws
  // core::Error from the compiler.
  std::string kernel_hash(const kernels::Problem& p, const core::TuningConfig& c) const;
  OpProof prove(const kernels::Problem& p, const core::TuningConfig& c, const std::string& hash);

 private:
  results::Store& store_;
  std::int64_t run_;
  const kernels::OpTemplate& t_;
  int seeds_;
  int sm_count_;
  results::TemplateId tmpl_;
  results::Environment env_;
  std::unique_ptr<WorkerProcess> worker_;
};

// The verification classes of config `c` at `p` (for `sm_count` SMs) joined by ';', as trials
// at `p` carry them.
std::string joined_classes(const kernels::OpTemplate& t, const kernels::Problem& p, const core::TuningConfig& c,
                           int sm_count);

}  // namespace mgpu::harness
