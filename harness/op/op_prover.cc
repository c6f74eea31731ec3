#include "harness/op/op_prover.h"

#include <algorithm>

#include "harness/stop_signals.h"

#include <chrono>

#include <fmt/format.h>

#include "core/compile_cache.h"
#include "core/compiler.h"
#include "harness/measure/trial_record.h"
#include "harness/measure/trial_request.h"
#include "harness/verify/virtual_device.h"
#include "harness/version.h"

namespace mgpu::harness {

OpProver::OpProver(results::Store& store, std::int64_t run, const kernels::OpTemplate& t, int seeds,
                   std::vector<std::string> worker_environment, int sm_count)
    : store_(store),
      run_(run),
      t_(t),
      seeds_(seeds),
      sm_count_(sm_count),
      tmpl_(template_id(t)),
      env_(virtual_environment(t.arch())) {
  worker_ = std::make_unique<WorkerProcess>(std::vector<std::string>{executable_path(), "worker"}, 900.0,
                                            std::move(worker_environment));
}

std::string OpProver::kernel_hash(const kernels::Problem& p, const core::TuningConfig& c) const {
  core::CompileOptions o = core::CompileOptions::from_environment();
  o.cache_dir = core::CompileCache::default_dir().string();
  return core::kernel_hash(core::compile_module(t_.build_mlir(p, c), t_.arch(), o).units.at(0).ptx);
}

OpProof OpProver::prove(const kernels::Problem& target, const core::TuningConfig& c, const std::string& hash) {
  OpProof proof;
  const auto t0 = std::chrono::steady_clock::now();
  auto done = [&] {
    proof.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return proof;
  };
  for (const kernels::VerificationProblem& v : t_.verification_problems(target, c, sm_count_)) {
    if (!v.unrunnable_why.empty()) {  // no problem of the class fits the virtual device: unproven
      proof.ok = false;
      proof.status = "unsupported";
      proof.failed_class = v.problem_class;
      proof.message = v.unrunnable_why;
      return done();
    }
    results::Verification earlier = store_.verification({c.to_json(), hash, v.problem_class});
    std::string status, message;
    // A pass under fewer schedules than asked for is a weaker check than the one requested (a
    // race one interleaving hides): it runs again. A failure under any number is a failure.
    const bool weaker = earlier.state == results::Verification::State::Verified && earlier.schedules < std::max(1, seeds_);
    if (earlier.state != results::Verification::State::None && !weaker) {
      ++proof.reused;
      if (earlier.state == results::Verification::State::Verified) continue;
      status = earlier.failure->status;
      message = earlier.failure->message;
    } else {
      TrialRequest req;
      req.arch = std::string(t_.arch().name);
      req.op = std::string(t_.op());
      req.problem_key = v.problem.key;
      req.config = c;
      req.measurer = "emulate";
      req.seeds = seeds_;
      req.sm_count = v.sm_count;
      Measurement m = worker_->run(req);
      if (stop_requested() && m.status != TrialStatus::Ok) {
        // A stop reaches the worker too: its failure says nothing about the config. Nothing is
        // recorded; the class runs again when the work resumes.
        proof.ok = false;
        proof.status = "env_error";
        proof.failed_class = v.problem_class;
        proof.message = "stopped by a signal before this class's run finished";
        return done();
      }
      ++proof.ran;
      results::TrialRecord rec = trial_record(run_, tmpl_, problem_record(v.problem), c, env_, m);
      rec.problem_class = v.problem_class;
      store_.record_trial(rec);
      if (m.status == TrialStatus::Ok && m.kernel_hash != hash) {
        proof.ok = false;
        proof.status = "env_error";
        proof.failed_class = v.problem_class;
        proof.message = fmt::format("{} builds another kernel at {} ({}) than at {} ({}): the template's verification "
                                    "problems must share the binary; nothing is verified",
                                    t_.name(), v.problem.key, m.kernel_hash, target.key, hash);
        return done();
      }
      status = std::string(to_string(m.status));
      message = m.message;
    }
    if (status != "ok") {
      proof.ok = false;
      proof.status = status;
      proof.failed_class = v.problem_class;
      proof.message = fmt::format("failed verification on the virtual device at {} ({}): {}", v.problem_class,
                                  v.problem.key, message);
      return done();
    }
  }
  return done();
}

std::string joined_classes(const kernels::OpTemplate& t, const kernels::Problem& p, const core::TuningConfig& c,
                           int sm_count) {
  std::string joined;
  for (const kernels::VerificationProblem& v : t.verification_problems(p, c, sm_count))
    joined += (joined.empty() ? "" : ";") + v.problem_class;
  return joined;
}

}  // namespace mgpu::harness
