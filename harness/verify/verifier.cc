#include "harness/verify/verifier.h"

#include <chrono>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "core/cache_usability.h"
#include "core/compile_cache.h"
#include "core/compile_pool.h"
#include "core/compiler.h"
#include "core/error.h"
#include "harness/measure/trial_record.h"
#include "harness/measure/worker.h"
#include "harness/version.h"

namespace mgpu::harness {

struct Verifier::Compiled {
  std::string kernel_hash;
  std::string error;
  bool env_error = false;  // as measure_trial judges it: an I/O failure or a missing tool
};

namespace {

kernels::MatmulProblem with_dtypes(kernels::MatmulProblem p, const kernels::MatmulProblem& like) {
  p.in_dtype = like.in_dtype;
  p.out_dtype = like.out_dtype;
  p.b_layout = like.b_layout;
  return p;
}

}  // namespace

Verifier::Verifier(results::Store& store, std::int64_t run_id, const kernels::MatmulTemplate& t,
                   results::Environment env, int seeds, std::vector<std::string> worker_environment)
    : store_(store), run_id_(run_id), t_(t), env_(std::move(env)), seeds_(seeds),
      worker_environment_(std::move(worker_environment)) {}

Verifier::~Verifier() = default;

std::vector<Verifier::Compiled> Verifier::compile(const std::vector<core::TuningConfig>& configs,
                                                  const kernels::MatmulProblem& like, int threads) {
  // Configs that differ only in run-time parameters share one binary: compiled once.
  std::vector<core::CompileJob> jobs;
  std::map<std::string, size_t> job_of_kernel;
  std::vector<std::optional<size_t>> job_of_config;
  std::vector<std::string> build_errors(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    core::TuningConfig key = configs[i];
    for (const std::string& name : t_.run_time_params()) key.set(name, std::int64_t{0});
    auto it = job_of_kernel.find(key.to_json());
    if (it == job_of_kernel.end()) {
      try {
        // The module depends on the config, dtypes and layout only (MatmulTemplate::build), but
        // the validity rules on the shape too: a split config rejected at a prefill-sized
        // `like` (its workspace) is built at the decode twin, as verify --all chose it.
        kernels::MatmulProblem at = like;
        if (t_.why_invalid(at, configs[i])) at.m = 16;
        if (t_.why_invalid(at, configs[i])) at = like;  // the rule's message says why
        jobs.push_back({t_.build(at, configs[i]).mlir, &t_.arch()});
        it = job_of_kernel.emplace(key.to_json(), jobs.size() - 1).first;
      } catch (const core::Error& e) {
        build_errors[i] = e.what();
        job_of_config.push_back(std::nullopt);
        continue;
      }
    }
    job_of_config.push_back(it->second);
  }
  core::CompileOptions o = core::CompileOptions::from_environment();
  o.cache_dir = core::CompileCache::default_dir().string();
  if (core::why_cache_unusable(o.cache_dir)) o.cache_dir.clear();  // the caller warned about it once
  // In chunks, so a stop request is honoured within a chunk's compile time.
  std::vector<core::CompileOutcome> out;
  const size_t chunk = 16 * static_cast<size_t>(std::max(1, threads));
  for (size_t at = 0; at < jobs.size(); at += chunk) {
    if (interrupted_ && *interrupted_) {
      out.resize(jobs.size());
      for (size_t i = at; i < jobs.size(); ++i) out[i].error = core::Error(core::ErrorKind::IO, "stopped before compiling");
      break;
    }
    std::vector<core::CompileOutcome> part =
        core::compile_all(std::span(jobs).subspan(at, std::min(chunk, jobs.size() - at)), o, threads);
    for (auto& x : part) out.push_back(std::move(x));
  }
  std::vector<Compiled> compiled(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    if (!job_of_config[i]) {
      compiled[i].error = build_errors[i];
      continue;
    }
    const core::CompileOutcome& x = out[*job_of_config[i]];
    if (x.ok()) compiled[i].kernel_hash = core::kernel_hash(x.result->units.at(0).ptx);
    else {
      compiled[i].error = x.error->what();
      compiled[i].env_error = x.error->kind() == core::ErrorKind::IO || x.error->kind() == core::ErrorKind::Unavailable;
    }
  }
  return compiled;
}

std::vector<VerifyJob> Verifier::plan(const std::vector<core::TuningConfig>& configs,
                                      const std::vector<kernels::MatmulProblem>& targets, int sm_count,
                                      int compile_threads) {
  std::vector<VerifyJob> jobs;
  // Kernels depend on dtypes and layout only: one compile per distinct combination.
  std::map<std::string, std::vector<Compiled>> compiled;
  for (const kernels::MatmulProblem& target : targets) {
    std::string kind = fmt::format("{}{}{}", to_string(target.in_dtype), to_string(target.out_dtype),
                                   to_string(target.b_layout));
    auto it = compiled.find(kind);
    if (it == compiled.end()) it = compiled.emplace(kind, compile(configs, target, compile_threads)).first;
    for (size_t i = 0; i < configs.size(); ++i) {
      VerifyJob j;
      j.config = configs[i];
      j.target = target;
      j.kernel_hash = it->second[i].kernel_hash;
      j.compile_error = it->second[i].error;
      j.compile_env_error = it->second[i].env_error;
      kernels::KernelShape s = t_.kernel_shape(configs[i]);
      j.problem_class = kernels::classify(target, s, sm_count);
      std::string memo = fmt::format("{} {} {} {} {} {} {} {} {} {}", s.cta_tile_m, s.cta_tile_n, s.cluster_m,
                                     s.cluster_n, s.tile_k, s.stages, s.splits, s.stream, kind, j.problem_class.key());
      std::lock_guard<std::mutex> lock(proxy_mu_);
      auto p = proxies_.find(memo);
      if (p == proxies_.end()) {
        auto valid = [&](const kernels::MatmulProblem& q) { return t_.accepts(q); };
        p = proxies_.emplace(memo, kernels::verification_proxy(target, s, sm_count, valid)).first;
      }
      j.proxy = p->second;
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

std::vector<VerifyJob> Verifier::plan_standard(const std::vector<core::TuningConfig>& configs,
                                               const kernels::MatmulProblem& like, int compile_threads) {
  auto valid = [&](const kernels::MatmulProblem& q) { return t_.accepts(q); };
  std::vector<Compiled> compiled = compile(configs, like, compile_threads);
  std::map<std::string, std::vector<kernels::ProblemClass>> classes_of;  // by kernel shape
  std::vector<VerifyJob> jobs;
  for (size_t i = 0; i < configs.size(); ++i) {
    kernels::KernelShape s = t_.kernel_shape(configs[i]);
    std::string shape = fmt::format("{} {} {} {} {} {} {} {}", s.cta_tile_m, s.cta_tile_n, s.cluster_m, s.cluster_n,
                                    s.tile_k, s.stages, s.splits, s.stream);
    auto it = classes_of.find(shape);
    if (it == classes_of.end()) it = classes_of.emplace(shape, kernels::standard_classes(like, s, valid)).first;
    for (const kernels::ProblemClass& c : it->second) {
      VerifyJob j;
      j.config = configs[i];
      j.target = like;
      j.problem_class = c;
      j.kernel_hash = compiled[i].kernel_hash;
      j.compile_error = compiled[i].error;
      j.compile_env_error = compiled[i].env_error;
      std::string memo = shape + " " + c.key();
      auto p = proxies_.find(memo);
      if (p == proxies_.end()) p = proxies_.emplace(memo, kernels::proxy_problem(like, s, c, valid)).first;
      j.proxy = p->second;
      if (j.proxy) j.target = j.proxy->problem = with_dtypes(j.proxy->problem, like);
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

void Verifier::record(const VerifyJob& job, const Measurement& m, const kernels::MatmulProblem& problem) {
  results::TrialRecord rec = trial_record(run_id_, template_id(t_, t_.arch()), problem, job.config, env_, m);
  rec.kernel_hash = m.kernel_hash.empty() ? job.kernel_hash : m.kernel_hash;
  rec.problem_class = job.problem_class.key();
  std::lock_guard<std::mutex> lock(store_mu_);
  store_.record_trial(rec);
}

bool Verifier::from_store(const VerifyJob& job, VerifyResult& r) {
  std::lock_guard<std::mutex> lock(store_mu_);
  results::Verification v = store_.verification({job.config.to_json(), job.kernel_hash, job.problem_class.key()});
  if (v.state == results::Verification::State::None) return false;
  // A pass under fewer schedules than asked for is a weaker check than the one requested (a
  // race one interleaving hides); a failure under any number of schedules is a failure.
  if (v.state == results::Verification::State::Verified && v.schedules < std::max(1, seeds_)) return false;
  r.reused = true;
  r.status = v.state == results::Verification::State::Verified ? "verified" : v.failure->status;
  if (v.failure) {
    r.message = v.failure->message;
    r.verification_error = v.failure->verification_error;
  }
  return true;
}

std::string Verifier::work_key(const VerifyJob& job) const {
  if (!job.compile_error.empty() || !job.proxy || job.kernel_hash.empty()) return "";
  return fmt::format("{} {} {} {} {}", job.kernel_hash, job.proxy->problem.key(), job.proxy->sm_count,
                     job.problem_class.key(), t_.launch_signature(job.proxy->problem, job.config, job.proxy->sm_count));
}

VerifyResult Verifier::answer_by_equivalence(const VerifyJob& job, const VerifyJob& ran, const VerifyResult& verdict) {
  VerifyResult r;
  r.job = job;
  if (from_store(job, r)) return r;  // an earlier verification of its own
  r.status = verdict.status;
  r.verification_error = verdict.verification_error;
  r.equivalent_to = ran.config.to_json();
  const std::string why = fmt::format("by equivalence: kernel {} runs the same tiles, cluster for cluster, as for {}",
                                      job.kernel_hash, r.equivalent_to);
  r.message = verdict.message.empty() ? why : verdict.message + " (" + why + ")";
  Measurement m;
  m.source = "emulate";
  m.status = verdict.passed() ? TrialStatus::Ok : parse_trial_status(verdict.status);
  m.message = r.message;
  m.verification_error = verdict.verification_error;
  m.kernel_hash = job.kernel_hash;
  record(job, m, job.proxy->problem);
  return r;
}

VerifyResult Verifier::answer(const VerifyJob& job, WorkerProcess& worker, const std::atomic<bool>& interrupted) {
  VerifyResult r;
  r.job = job;
  const std::string cls = job.problem_class.key();
  auto record = [&](const Measurement& m, const kernels::MatmulProblem& problem) { this->record(job, m, problem); };
  if (!job.compile_error.empty() || !job.proxy) {
    Measurement m;
    m.source = "emulate";
    m.status = job.compile_error.empty() ? TrialStatus::Unsupported
               : job.compile_env_error    ? TrialStatus::EnvError
                                          : TrialStatus::CompileError;
    m.message = job.compile_error.empty() ? fmt::format("no problem of class {} is small enough to emulate", cls)
                                          : job.compile_error;
    r.status = std::string(to_string(m.status));
    r.message = m.message;
    record(m, job.target);
    return r;
  }
  if (from_store(job, r)) return r;
  TrialRequest req;
  req.arch = std::string(t_.arch().name);
  req.problem = job.proxy->problem;
  req.config = job.config;
  req.measurer = "emulate";
  req.compile = true;
  req.verify = true;
  req.seeds = seeds_;
  req.sm_count = job.proxy->sm_count;
  auto t0 = std::chrono::steady_clock::now();
  Measurement m = worker.run(req);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.source = "emulate";
  r.status = m.status == TrialStatus::Ok ? "verified" : std::string(to_string(m.status));
  r.message = m.message;
  r.verification_error = m.verification_error;
  if (!m.kernel_hash.empty() && m.kernel_hash != job.kernel_hash)
    r.message += fmt::format(" (the worker compiled kernel {}, not {})", m.kernel_hash, job.kernel_hash);
  // A signal reaches the worker too: its failure then says nothing about the config, and the
  // job is left for the next run.
  if (interrupted && m.status != TrialStatus::Ok) return r;
  record(m, job.proxy->problem);
  return r;
}

VerifyResult Verifier::verify(const core::TuningConfig& config, const kernels::MatmulProblem& target, int sm_count,
                              const std::atomic<bool>& interrupted) {
  std::vector<VerifyJob> jobs = plan({config}, {target}, sm_count, 1);
  if (!worker_) worker_ = std::make_unique<WorkerProcess>(std::vector<std::string>{executable_path(), "worker"}, 900.0,
                                                worker_environment_);
  return answer(jobs.front(), *worker_, interrupted);
}

std::vector<VerifyResult> Verifier::run(const std::vector<VerifyJob>& jobs, int parallel,
                                        const std::atomic<bool>& interrupted,
                                        const std::function<void(const VerifyResult&)>& on_result) {
  // One run per distinct work: the first job of each key runs, the rest follow its verdict.
  std::vector<std::vector<size_t>> followers(jobs.size());
  std::vector<size_t> leaders;
  {
    std::map<std::string, size_t> leader_of;
    for (size_t i = 0; i < jobs.size(); ++i) {
      std::string key = work_key(jobs[i]);
      auto it = key.empty() ? leader_of.end() : leader_of.find(key);
      if (it != leader_of.end()) {
        followers[it->second].push_back(i);
        continue;
      }
      if (!key.empty()) leader_of.emplace(std::move(key), i);
      leaders.push_back(i);
    }
  }
  std::vector<std::optional<VerifyResult>> slots(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex report_mu;
  auto work = [&] {
    std::unique_ptr<WorkerProcess> worker;
    for (size_t n; !interrupted && (n = next++) < leaders.size();) {
      const size_t i = leaders[n];
      if (!worker)
        worker = std::make_unique<WorkerProcess>(std::vector<std::string>{executable_path(), "worker"}, 900.0,
                                                worker_environment_);
      VerifyResult r = answer(jobs[i], *worker, interrupted);
      // A signal reaches the worker too: its failure then says nothing about the config.
      if (interrupted && !r.reused && !r.passed()) break;
      std::vector<VerifyResult> follow;
      for (size_t f : followers[i]) follow.push_back(answer_by_equivalence(jobs[f], jobs[i], r));
      std::lock_guard<std::mutex> lock(report_mu);
      if (on_result) on_result(r);
      slots[i] = std::move(r);
      for (size_t k = 0; k < follow.size(); ++k) {
        if (on_result) on_result(follow[k]);
        slots[followers[i][k]] = std::move(follow[k]);
      }
    }
  };
  // A failure of one thread (the disk holding the database filled) ends the others after their
  // current job, and is rethrown here once all are joined: out of a thread it was terminate().
  std::exception_ptr failure;
  std::mutex failure_mu;
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mu);
      if (!failure) failure = std::current_exception();
      next = leaders.size();  // no thread takes another job
    }
  };
  int n = std::max(1, std::min<int>(parallel, static_cast<int>(leaders.size())));
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back(guarded);
  guarded();
  for (std::thread& th : threads) th.join();
  if (failure) std::rethrow_exception(failure);
  std::vector<VerifyResult> out;
  for (auto& s : slots)
    if (s) out.push_back(std::move(*s));
  return out;
}

}  // namespace mgpu::harness
