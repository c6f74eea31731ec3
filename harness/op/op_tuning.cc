#include "harness/op/op_tuning.h"

#include <algorithm>
#include <memory>
#include <set>

#include <unistd.h>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include "core/compiler.h"
#include "core/error.h"
#include "harness/measure/trial_record.h"
#include "harness/measure/trial_request.h"
#include "harness/op/op_prover.h"
#include "harness/tune/device_choice.h"
#include "harness/tune/run_hold.h"
#include "harness/verify/virtual_device.h"
#include "harness/version.h"
#include "kernels/op_registry.h"
#include "results/claims.h"
#include "results/database.h"
#include "results/stored_config.h"
#include "results/store.h"
#include "search/strategy.h"

namespace mgpu::harness {
namespace {

void check_fits(const kernels::Problem& p, const core::DeviceReport& report) {
  const double machine = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  const double device = static_cast<double>(report.gpus.front().memory_bytes);
  // The number compared is the number said, and the one a campaign asks Slurm for.
  const double need = op_emulate_machine_bytes(p);
  constexpr double kGiB = double(1 << 30);
  const std::string advice = fmt::format("Tune with --device model (each config is verified on the virtual device at "
                                         "small problems of the same classes) or 'verify {}'", p.op);
  if (p.bytes > device)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--device emulate runs the problem itself, and {} needs {:.1f} GiB of device "
                                  "memory; the virtual device has {:.0f} GiB. {}",
                                  p.key, p.bytes / kGiB, device / kGiB, advice));
  if (need > machine)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--device emulate runs the problem itself, and {} needs about {:.1f} GiB of memory "
                                  "(the virtual device's buffers, {:.1f} GiB, the reference's float64 copies and as "
                                  "much again for the rest); this machine has {:.1f} GiB. {}",
                                  p.key, need / kGiB, p.bytes / kGiB, machine / kGiB, advice));
}

// How fast the virtual device runs a kernel's arithmetic on one core of the machines it was
// measured on (round-9 battery, 2-core Debian VM: attention h1 s4096 d128, 8.6 GFLOP, in 25 s;
// s2048, 2.1 GFLOP, in 6.5 s): for an estimate a user can act on, not a promise.
constexpr double kVirtualDeviceFlopsPerSecond = 3.3e8;

std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 2 * 3600) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

double op_emulate_machine_bytes(const kernels::Problem& p) {
  // Inputs and outputs on the virtual device, in this machine's memory, plus the CPU reference's
  // float64 copies of them (4x the 16-bit bytes); twice that, for everything else a worker holds.
  return 2 * 5 * p.bytes;
}

OpTuneReport tune_op(const OpTuneOptions& o, const std::atomic<bool>& interrupted,
                     const std::function<void(const OpTrialLine&)>& on_trial) {
  const core::ArchSpec& arch = core::parse_arch(o.arch);
  const kernels::OpTemplate& t = kernels::op_template(o.op, arch);
  if (o.device.rfind("replay:", 0) == 0)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--device replay is for matmuls; {} tunes on model, emulate, cuda or auto", o.op));
  Device device = pick_device({o.device, o.db, std::string(t.name()), o.problem.key,
                               [&](const core::DeviceReport& r) {
                                 check_fits(o.problem, r);
                                 for (const kernels::Problem& p : o.also_fits) check_fits(p, r);
                               }},
                              arch);
  if (!device.note.empty() && o.notify) o.notify(device.note);

  OpTuneReport rep;
  rep.source = device.source;
  rep.note = device.note;
  rep.device_name = device.env.device_name;
  rep.template_name = std::string(t.name());
  std::vector<core::TuningConfig> candidates;
  const core::ParamSpace space = t.space();
  space.enumerate([&](const core::TuningConfig& c) {
    ++rep.space_size;
    if (!t.why_invalid(o.problem, c)) candidates.push_back(c);
  });
  rep.valid = candidates.size();
  if (candidates.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("no config of {} is valid for {}: see 'mgpu-tune space {} ...' for the rules",
                                  t.name(), o.problem.key, o.op));
  const int budget = o.trials > 0 ? o.trials : static_cast<int>(candidates.size());
  // The virtual device runs the problem itself: a long run says so before it starts, and each
  // config says it is running (nothing else is printed until it ends).
  const double emulate_s = device.source == "emulate" ? o.problem.flops / kVirtualDeviceFlopsPerSecond : 0;
  if (emulate_s > 60 && o.notify)
    o.notify(fmt::format("the virtual device runs {} itself, at about {:.1f} GFLOP/s here: about {} per config, {} for "
                         "{} configs. A small problem of the same kernel (for attention: --heads 2 --seq-q 300 --seq-kv "
                         "500) proves the same configs in seconds; --device model ranks this one",
                         o.problem.key, kVirtualDeviceFlopsPerSecond / 1e9, duration_text(emulate_s),
                         duration_text(emulate_s * budget), budget));
  search::StrategyContext ctx{space, candidates, o.seed,
                              [&](const core::TuningConfig& c) { return t.predict_ms(o.problem, c, *device.rates); },
                              {}};
  std::unique_ptr<search::Strategy> strategy = search::make_strategy(o.strategy, ctx);
  const bool verifies = o.verify && (device.source == "model" || device.source == "cuda");
  if (verifies) check_virtual_device_knobs("the virtual device");
  (void)core::CompileOptions::from_environment();  // a compile setting that cannot work is said once, now

  std::optional<std::vector<std::string>> worker_env;
  if (verifies) {
    if (auto why = why_not_verifiable(arch))
      rep.unverified_why = *why + "; results are unverified (labelled 'none')";
    else
      worker_env = virtual_device_environment(arch, device.source == "model" ? "verifying before predicting (or --no-verify)"
                                                                             : "verifying before timing (or --no-verify)");
  } else if (!o.verify) {
    rep.unverified_why = "--no-verify";
  }

  results::Store store = results::Store::open(o.db, results::OpenMode::ReadWrite);
  const results::TemplateId tmpl = template_id(t);
  const results::ProblemRecord problem = problem_record(o.problem);
  // The study's problem row must be the problem its key names (a row edited to other fields or
  // flops would rank this study's times under them): refused as damaged.
  store.check_problem(problem);
  // Its rows too, every rule (samples, times, configs), and those of the suite's problems still to
  // come: a damaged study is refused before anything is written (round 13, F7 and F10).
  store.check_rows_of(tmpl, problem.key);
  // And the verdict rows the prover will read, every config's (they are read config by config as
  // the search reaches them: damage on a later one stopped a fresh study after it had written
  // trials and a run, round 16 F1).
  if (worker_env) {
    std::set<std::string> checked;
    for (const core::TuningConfig& c : candidates)
      for (const kernels::VerificationProblem& v : t.verification_problems(o.problem, c, device.env.sm_count))
        if (v.unrunnable_why.empty() && checked.insert(v.problem.key).second) store.check_rows_of(tmpl, v.problem.key);
  }
  for (const kernels::Problem& later : o.also_fits) {
    store.check_problem(problem_record(later));
    store.check_rows_of(tmpl, later.key);
  }
  results::Claims claims(store.db(), {tmpl, o.problem.key, device.env.device_name, device.source}, o.db);
  std::set<std::string> known;
  std::map<std::string, double> results;
  std::map<std::string, std::int64_t> trial_of;  // config -> the study's trial that ranks it
  auto learn = [&](const results::StudyTrial& r) {
    if (!known.insert(r.config_json).second) return false;
    const bool ok = r.status == "ok" && r.median_ms;
    // Ranked and reported whole, as best gives it (a stored config that leaves a parameter out
    // means its default).
    const core::TuningConfig whole = results::study_trial_config(o.db, r, tmpl, problem);
    known.insert(whole.to_json());
    trial_of[whole.to_json()] = r.id;
    strategy->tell(whole, ok ? r.median_ms : std::nullopt);
    if (ok) results[whole.to_json()] = *r.median_ms;
    return true;
  };
  for (const results::StudyTrial& r : claims.trials_after(0))
    if (learn(r)) ++rep.trials_resumed;

  const std::int64_t run = store.begin_run("tune", o.arguments, version_string());
  RunHold hold(store, claims, run);
  rep.run_uuid = store.run(std::to_string(run)).uuid;
  std::unique_ptr<OpProver> prover;
  if (worker_env) prover = std::make_unique<OpProver>(store, run, t, o.verify_seeds, *worker_env, device.env.sm_count);
  auto classes_of = [&](const core::TuningConfig& c) {
    return prover ? joined_classes(t, o.problem, c, device.env.sm_count) : std::string();
  };

  // Configs an earlier run ranked unproven (--no-verify) are proven now, before they rank here:
  // by default one the virtual device fails never ranks. A verdict already stored is reused.
  if (prover && device.source != "emulate")
    for (auto it = results.begin(); it != results.end() && !interrupted;) {
      const core::TuningConfig c = results::stored_config(o.db, 0, tmpl, &problem, it->first);
      OpProof proof;
      std::string hash;
      bool compiled = true;
      try {
        hash = prover->kernel_hash(o.problem, c);
      } catch (const core::Error& e) {
        if (e.kind() == core::ErrorKind::IO || e.kind() == core::ErrorKind::Unavailable || interrupted) throw;
        proof.ok = false;
        proof.status = "compile_error";
        compiled = false;
      }
      // Outside the compile's catch: a damaged verdict row is the database's error (exit 2), not a
      // config that failed verification (round 13, F8).
      if (compiled) proof = prover->prove(o.problem, c, hash);
      rep.verify_reused += proof.reused;
      if (proof.ok) {
        if (proof.ran > 0) ++rep.verified;
        // The trial that ranks it gets the keys its verdicts are found by (the kernel and the
        // classes), as a verifying run records them: its label is then "virtual", not "none".
        results::guard_database(o.db, [&] {
          SQLite::Statement keys(store.db(), "UPDATE trials SET kernel_hash = ?, problem_class = ? WHERE id = ? AND "
                                             "(kernel_hash = '' OR problem_class = '')");
          keys.bind(1, hash);
          keys.bind(2, classes_of(c));
          keys.bind(3, trial_of.at(it->first));
          keys.exec();
        });
        ++it;
      } else if (proof.status == "env_error") {
        ++it;  // no verdict (a stop, the machine): the next run proves it
      } else {
        ++rep.verify_failed;  // recorded by the prover; it never ranks
        it = results.erase(it);
      }
    }

  int index = claims.counted();
  while (!interrupted) {
    std::vector<core::TuningConfig> next = strategy->ask(1);
    if (next.empty()) {
      rep.exhausted = true;
      break;
    }
    const core::TuningConfig& c = next.front();
    const std::string json = c.to_json();
    const results::ClaimResult claim = claims.claim(json, budget);
    if (claim == results::ClaimResult::BudgetReached) break;
    if (claim == results::ClaimResult::Taken) {
      for (const results::StudyTrial& r : claims.trials_after(0)) learn(r);
      if (!known.count(json)) strategy->tell(c, std::nullopt);  // claimed by a live run: not ours to measure
      known.insert(json);
      continue;
    }
    hold.hold(json);
    known.insert(json);
    OpTrialLine line;
    line.index = ++index;
    line.budget = budget;
    line.config = c;
    if (emulate_s > 10 && on_trial) {
      OpTrialLine starting = line;
      starting.running = fmt::format("running on the virtual device (about {})", duration_text(emulate_s));
      on_trial(starting);
    }
    Measurement m;
    std::string cls;
    bool measured = true;
    if (prover) {
      std::string hash;
      try {
        hash = prover->kernel_hash(o.problem, c);
      } catch (const core::Error& e) {
        m.source = device.source;
        m.status = e.kind() == core::ErrorKind::IO || e.kind() == core::ErrorKind::Unavailable ? TrialStatus::EnvError
                                                                                                : TrialStatus::CompileError;
        m.message = e.what();
        measured = false;
      }
      if (measured) {
        const OpProof proof = prover->prove(o.problem, c, hash);
        rep.verify_reused += proof.reused;
        if (!proof.ok) {
          line.verification = "failed at " + proof.failed_class;
          m.source = device.source;
          m.status = parse_trial_status(proof.status);
          m.message = proof.message;
          m.kernel_hash = hash;
          measured = false;
          if (m.status != TrialStatus::EnvError) ++rep.verify_failed;
        } else {
          ++rep.verified;
          line.verification = fmt::format("verified at {} classes{}", proof.ran + proof.reused,
                                          proof.reused ? fmt::format(" ({} reused)", proof.reused) : "");
        }
      }
      cls = classes_of(c);
    }
    if (measured) {
      TrialRequest req;
      req.arch = std::string(arch.name);
      req.op = o.op;
      req.problem_key = o.problem.key;
      req.config = c;
      req.measurer = device.source;
      req.timer = o.timer;
      req.seeds = o.verify_seeds;
      req.verify = o.verify;
      m = device.measure(req);
      if (device.source == "emulate" && !(interrupted && m.status != TrialStatus::Ok)) {
        if (m.status == TrialStatus::Ok) ++rep.verified;
        else if (m.status != TrialStatus::EnvError) ++rep.verify_failed;
      }
    }
    if (interrupted && m.status != TrialStatus::Ok) {
      // A stop reaches the worker too: its failure says nothing about the config. Left
      // unrecorded, the trial runs again when the study resumes (as the matmul tuner does).
      hold.release();
      break;
    }
    results::TrialRecord rec = trial_record(run, tmpl, problem, c, device.env, m);
    rec.problem_class = cls;
    store.record_trial(rec);
    hold.release();
    ++rep.trials_this_run;
    if (m.status != TrialStatus::Ok) {
      ++rep.failed;
      if (m.status == TrialStatus::EnvError) ++rep.env_failed;
    }
    const bool timed = m.status == TrialStatus::Ok && device.source != "emulate";
    strategy->tell(c, timed ? std::optional<double>(m.median_ms) : std::nullopt);
    if (timed) results[json] = m.median_ms;
    line.status = std::string(to_string(m.status));
    line.message = m.message;
    if (timed) line.ms = m.median_ms;
    if (on_trial) on_trial(line);
  }
  rep.interrupted = interrupted;
  std::vector<std::pair<std::string, double>> ranked(results.begin(), results.end());
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second < b.second; });
  for (const auto& [json, ms] : ranked)
    rep.top.push_back({core::TuningConfig::from_json(json), ms, o.problem.flops / (ms * 1e-3) / 1e12});
  hold.finish();
  return rep;
}

}  // namespace mgpu::harness
