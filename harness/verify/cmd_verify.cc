#include "harness/verify/cmd_verify.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cache_usability.h"
#include "core/compile_cache.h"
#include "core/compiler.h"
#include "core/error.h"
#include "harness/cli.h"
#include "harness/config_option.h"
#include "harness/config_sample.h"
#include "harness/exit_codes.h"
#include "harness/measure/trial_record.h"
#include "harness/numeric_options.h"
#include "harness/problem_options.h"
#include "harness/stop_signals.h"
#include "harness/tune/shape_suite.h"
#include "harness/verify/verifier.h"
#include "harness/verify/virtual_device.h"
#include "harness/version.h"
#include "kernels/matmul_suites.h"
#include "kernels/matmul_template.h"
#include "results/store.h"

namespace mgpu::harness {
namespace {

struct Options {
  ArchOption arch;
  MatmulProblemOptions problem;
  std::string config_json;
  bool all = false;
  std::string shapes;
  int seeds = 2;
  int sample = 0;
  std::uint64_t sample_seed = 1;
  std::vector<std::string> only;  // NAME=VALUE: --all's configs with that value
  int jobs = 0;
  std::string db = "mgpu-tune.db";
  bool json = false, quiet = false, verbose = false;
  std::string arguments;
  bool problem_given = false;
};

std::string format_elapsed(double s) {
  int t = static_cast<int>(s);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string proxy_text(const VerifyJob& j) {
  if (!j.proxy) return "no proxy";
  return fmt::format("{}x{}x{} for {} SMs", j.proxy->problem.m, j.proxy->problem.n, j.proxy->problem.k, j.proxy->sm_count);
}

nlohmann::json result_json(const VerifyResult& r) {
  nlohmann::json j = {{"config", nlohmann::json::parse(r.job.config.to_json())},
                      {"problem_class", r.job.problem_class.key()},
                      {"target", r.job.target.key()},
                      {"kernel_hash", r.job.kernel_hash},
                      {"status", r.status},
                      {"reused", r.reused},
                      {"equivalent_to", r.equivalent_to.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json::parse(r.equivalent_to)},
                      {"message", r.message},
                      {"wall_s", r.wall_s}};
  if (r.job.proxy) j["proxy"] = {{"problem", r.job.proxy->problem.key()}, {"sm_count", r.job.proxy->sm_count}};
  j["verification_error"] = r.verification_error ? nlohmann::json(*r.verification_error) : nlohmann::json(nullptr);
  return j;
}

// --sample picks among --all's configs; with the one config --config names it would be ignored
// without a word, and the run would not be the sample the user asked for.
void refuse_sample_with_config(const CLI::App& cmd) {
  if (!cmd.count("--config")) return;
  for (const char* flag : {"--sample", "--sample-seed"})
    if (cmd.count(flag))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{} has no effect with --config (one config): it samples --all's configs", flag));
}

// --only NAME=VALUE: the parameter must be the template's and the value in its domain, so a
// typo never verifies nothing (or everything) without a word.
std::vector<std::pair<std::string, core::ParamValue>> parse_only(const kernels::MatmulTemplate& t,
                                                                 const std::vector<std::string>& only) {
  std::vector<std::pair<std::string, core::ParamValue>> out;
  const core::ParamSpace space = t.space();
  for (const std::string& o : only) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--only {}: expected NAME=VALUE, e.g. schedule=split_k", o));
    const std::string name = o.substr(0, eq), value = o.substr(eq + 1);
    const core::Param* param = nullptr;
    std::string names;
    for (const core::Param& p : space.params()) {
      if (p.name == name) param = &p;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!param)
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--only {}: {} has no parameter {} ({})", o, t.name(), name, names));
    std::optional<core::ParamValue> found;
    std::string values;
    for (const core::ParamValue& v : param->domain) {
      const std::string text = core::to_string(v);
      if (text == value) found = v;
      values += (values.empty() ? "" : ", ") + text;
    }
    if (!found)
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--only {}: {} takes {}", o, name, values));
    out.emplace_back(name, *found);
  }
  return out;
}

void run(const Options& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  kernels::MatmulProblem like = o.problem.resolve();
  t.check_problem(like);
  if (o.all == !o.config_json.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "give exactly one of --config JSON and --all");
  if (auto why = why_not_verifiable(arch))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("verify --arch {}: {}", arch.name, *why));

  std::vector<kernels::MatmulProblem> targets;
  if (!o.shapes.empty()) {
    ShapeSuite suite = load_shape_suite(o.shapes, like);
    check_suite_shapes(suite, t);  // a row the template cannot run is named by file and line
    targets = suite.shapes;
  }
  // The shapes a config must be valid at (one of them): the suite's rows; else `like` (4096^3
  // unless given) or, without a problem, also its decode twin, M = 16 -- split-K's workspace rule
  // rejects every split config at 4096^3, and they are what decode runs.
  std::vector<kernels::MatmulProblem> valid_at = targets;
  if (valid_at.empty()) {
    valid_at.push_back(like);
    if (!o.problem_given) {
      kernels::MatmulProblem decode = like;
      decode.m = 16;
      valid_at.push_back(decode);
    }
  }
  auto valid_somewhere = [&](const core::TuningConfig& c) {
    for (const kernels::MatmulProblem& q : valid_at)
      if (!t.why_invalid(q, c)) return true;
    return false;
  };
  std::vector<core::TuningConfig> configs;
  if (o.all) {
    const auto only = parse_only(t, o.only);
    // Values of one parameter are alternatives; different parameters must all match.
    std::map<std::string, std::vector<core::ParamValue>> wanted;
    for (const auto& [name, value] : only) wanted[name].push_back(value);
    for (core::TuningConfig& c : t.valid_configs(valid_at)) {
      bool matches = true;
      for (const auto& [name, values] : wanted)
        matches = matches && std::find(values.begin(), values.end(), c.values().at(name)) != values.end();
      if (matches) configs.push_back(std::move(c));
    }
    if (configs.empty())
      throw core::Error(core::ErrorKind::InvalidInput, "--all with --only: no valid config of the space has those values");
    if (o.sample > 0 && o.sample < static_cast<int>(configs.size())) configs = sample_configs(configs, o.sample, o.sample_seed);
  } else {
    core::TuningConfig c = config_from_user(t, o.config_json);
    // Values outside the default space are fine where the rules accept them, at some shape.
    if (!valid_somewhere(c)) t.require_valid(valid_at.front(), c);  // says why, at the first
    configs.push_back(c);
  }
  std::vector<std::string> worker_env = virtual_device_environment(arch, "verify");
  // The compile environment (MGPU_TOOL_TIMEOUT, MGPU_DUMP_TO) is refused before the database is
  // created or a run row written: a value that cannot work is the user's to fix, not a run.
  (void)core::CompileOptions::from_environment();

  results::Store store = results::Store::open(o.db, results::OpenMode::ReadWrite);
  install_stop_handlers();
  if (auto why = core::why_cache_unusable(core::CompileCache::default_dir()))
    core::warn_cache_unusable(core::CompileCache::default_dir(), *why);  // compiles go on without it
  std::int64_t run_id = store.begin_run("verify", o.arguments, version_string());
  Verifier verifier(store, run_id, t, virtual_environment(arch), o.seeds, worker_env);
  verifier.stop_on(stop_requested());
  const int threads = o.jobs > 0 ? o.jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const bool progress = !o.json && !o.quiet;
  if (progress)
    fmt::print(stderr, "compiling {} config(s) for {} on {} threads (the compile cache keeps them)...\n",
               configs.size(), arch.name, threads);
  std::vector<VerifyJob> jobs;
  if (!targets.empty()) {
    // The class each shape has on the target's GPU, for the SMs its grid is sized for.
    jobs = verifier.plan(configs, targets, arch.default_device().sm_count, threads);
  } else if (o.problem_given) {
    jobs = verifier.plan(configs, {like}, arch.default_device().sm_count, threads);
  } else {
    jobs = verifier.plan_standard(configs, like, threads);
  }
  if (stop_requested()) {
    store.end_run(run_id);
    fmt::print(stderr, "mgpu-tune: stopped while compiling: nothing was verified; the compiled kernels stay in the "
                       "compile cache\n");
    throw ExitWith{stop_exit_code()};
  }
  // One job per key: several targets of one class run one verification.
  std::map<std::string, size_t> seen;
  std::vector<VerifyJob> unique;
  for (VerifyJob& j : jobs)
    if (seen.emplace(j.config.to_json() + "\x1f" + j.kernel_hash + "\x1f" + j.problem_class.key(), unique.size()).second)
      unique.push_back(std::move(j));
  const double compile_s = elapsed();
  if (progress)
    fmt::print(stderr, "[{}] compiled in {:.1f} s; verifying {} (config, problem class) pairs under {} schedule(s), "
               "{} at a time\n", format_elapsed(compile_s), compile_s, unique.size(), o.seeds, threads);

  std::map<std::string, int> counts;
  int done = 0, reused = 0, equivalent = 0;
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const int every = std::max<int>(1, static_cast<int>(unique.size()) / 50);
  auto on_result = [&](const VerifyResult& r) {
    ++done;
    ++counts[r.status];
    reused += r.reused;
    equivalent += !r.equivalent_to.empty();
    if (o.verbose)
      fmt::print(stderr, "{:<13} {} {} ({}){}{}\n", r.status, r.job.config.to_json(), r.job.problem_class.key(),
                 proxy_text(r.job),
                 r.reused                    ? " [from the store]"
                 : !r.equivalent_to.empty() ? " [by equivalence]"
                                             : fmt::format(" {:.2f} s", r.wall_s),
                 r.message.empty() ? "" : ": " + r.message);
    else if (progress && (terminal || done % every == 0 || done == static_cast<int>(unique.size())))
      fmt::print(stderr, "{}[{}] {}/{} verified {}, failed {}{}", terminal ? "\r" : "", format_elapsed(elapsed()), done,
                 unique.size(), counts["verified"], done - counts["verified"], terminal ? "" : "\n");
  };
  std::vector<VerifyResult> results = verifier.run(unique, threads, stop_requested(), on_result);
  if (progress && terminal) fmt::print(stderr, "\n");
  store.end_run(run_id);
  const double wall_s = elapsed();
  std::vector<double> fresh;
  for (const VerifyResult& r : results)
    if (!r.reused && r.equivalent_to.empty()) fresh.push_back(r.wall_s);
  const int failed = static_cast<int>(results.size()) - counts["verified"];

  if (o.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const VerifyResult& r : results) rows.push_back(result_json(r));
    std::cout << nlohmann::json{{"arch", arch.name}, {"template", t.name()}, {"db", o.db}, {"seeds", o.seeds},
                                {"configs", configs.size()}, {"jobs", unique.size()}, {"done", results.size()},
                                {"verified", counts["verified"]}, {"failed", failed}, {"reused", reused},
                                {"by_equivalence", equivalent},
                                {"counts", counts}, {"wall_s", wall_s}, {"compile_s", compile_s},
                                {"median_s", median(fresh)}, {"interrupted", bool(stop_requested())},
                                {"results", rows}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    int shown = 0;
    for (const VerifyResult& r : results) {
      if (r.passed()) continue;
      if (shown++ == 20) {
        fmt::print("... {} more failures: 'mgpu-tune trials --db {} --source emulate' lists them all\n", failed - 20, o.db);
        break;
      }
      fmt::print("FAILED {:<13} {} at {} ({}): {}\n", r.status, r.job.config.to_json(), r.job.problem_class.key(),
                 proxy_text(r.job), r.message);
    }
    std::string by_status;
    for (const auto& [status, n] : counts) by_status += fmt::format("{}{} {}", by_status.empty() ? "" : ", ", n, status);
    fmt::print("{} on the virtual {}: {} of {} (config, problem class) pairs checked ({}); {} from earlier "
               "verifications in {}; {} by equivalence (the same kernel running the same tiles as a config "
               "run here); {} schedule(s) each; {:.1f} s ({:.1f} s compiling), median {:.2f} s per verification run\n",
               t.name(), arch.name, results.size(), unique.size(), by_status.empty() ? "none" : by_status, reused, o.db,
               equivalent, o.seeds, wall_s, compile_s, median(fresh));
  }
  if (stop_requested()) {
    fmt::print(stderr, "mgpu-tune: stopped: {} verifications are committed in {}; the same command resumes\n",
               results.size(), o.db);
    throw ExitWith{stop_exit_code()};
  }
  if (failed > 0) throw ExitWith{kExitFailure};
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto* verify = app.add_subcommand("verify", "Prove kernels on the virtual device before they are ranked");
  verify->require_subcommand(1);
  auto o = std::make_shared<Options>();
  auto* cmd = verify->add_subcommand(
      "matmul",
      "Run matmul configs on the virtual device against a float64 CPU reference, with the race, hazard and "
      "deadlock checkers on, and record each outcome (verified / wrong_result / hazard / deadlock / fault / "
      "unsupported). A verification counts for the compiled kernel and a class of problem (ragged M/N, K tail, "
      "several tiles per CTA, idle CTAs, cluster): each config runs once per class, at the smallest problem of "
      "that class, and a run finds earlier verifications of the same kernel in --db instead of redoing them.\n"
      "Examples:\n"
      "  mgpu-tune verify matmul --arch sm_90a --all                      # every valid config, 3 classes each\n"
      "  mgpu-tune verify matmul --arch sm_90a --all --m 4096 --n 4096 --k 4096   # the class of one shape\n"
      "  mgpu-tune verify matmul --arch sm_90a --config '{\"tile_n\":256}' --seeds 8");
  o->arch.add(*cmd);
  o->problem.add(*cmd);
  cmd->add_option("--config", o->config_json,
                  "One config as JSON; fields left out take the template's defaults. Values outside the default space "
                  "are accepted where the template's rules accept them (at the problem, at one of the suite's shapes, "
                  "or without either at 4096^3 or M = 16)");
  cmd->add_flag("--all", o->all,
                "Every valid config of the default space for --dtype, --out-dtype and --layout: valid at the problem "
                "given, at one of the --shapes suite's shapes, or without either at 4096^3 or at M = 16 (decode: where "
                "split_k configs are valid)");
  std::string suites;
  for (const kernels::NamedSuite& s : kernels::named_suites()) suites += fmt::format(", {}", s.name);
  cmd->add_option("--shapes", o->shapes,
                  "Verify at the class of each shape of a suite (.csv, .json or a named suite" + suites +
                      ") instead of one problem. Without --shapes, --m, --n or --k: three standard classes per "
                      "config (several tiles per CTA; ragged in M, N and K; ragged with several tiles per CTA, or "
                      "an idle CTA for clusters)");
  cmd->add_option("--seeds", o->seeds, "Schedules per verification (seeds 1, 4, 2, 3, ...): the first two already "
                                       "try async work landing late and waiters running early")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_option("--sample", o->sample,
                  "With --all: only this many configs, chosen to show every value of every parameter at least once "
                  "as far as this many can (a note names any value left out; CI's time-bounded check), the rest at "
                  "random. Not with --config, which names one")
      ->check(whole_number(1, 1000000));
  cmd->add_option("--only", o->only,
                  "With --all: only configs with this parameter value, NAME=VALUE (repeatable: values of one "
                  "name are alternatives, different names must all match), e.g. --only schedule=split_k --only "
                  "schedule=stream_k -- one part of the space, such as a new schedule")
      ->type_name("NAME=VALUE");
  cmd->add_option("--sample-seed", o->sample_seed, "Seed of --sample's random part (with --all)")
      ->check(whole_number(0))  // an unsigned option would take "-1" as 2^64-1
      ->capture_default_str();
  cmd->add_option("-j,--jobs", o->jobs, "Compiles and virtual-device workers at once (default: one per hardware thread)")
      ->check(whole_number(1, 256));
  cmd->add_option("--db", o->db, "Results database (created if absent)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print every verification as JSON (no progress)");
  auto* quiet = cmd->add_flag("--quiet,-q", o->quiet, "Print only failures and the summary");
  cmd->add_flag("--verbose,-v", o->verbose, "A line per verification with its proxy problem, time and report")->excludes(quiet);
  cmd->callback([o, cmd] {
    o->problem_given = cmd->count("--m") + cmd->count("--n") + cmd->count("--k") > 0;
    if (o->problem_given && !o->shapes.empty())
      throw core::Error(core::ErrorKind::InvalidInput, "--shapes gives the shapes: drop --m, --n and --k");
    refuse_sample_with_config(*cmd);
    if (!o->only.empty() && !o->all) throw core::Error(core::ErrorKind::InvalidInput, "--only picks among --all's configs: add --all");
    // The options as given, for the run's provenance.
    o->arguments = "verify matmul";
    for (const CLI::Option* opt : cmd->get_options())
      if (opt->count() > 0 && opt->get_name() != "--help")
        o->arguments += opt->get_type_size() == 0 ? " " + opt->get_name() : fmt::format(" {}={}", opt->get_name(), opt->as<std::string>());
    run(*o);
  });
}

}  // namespace mgpu::harness
