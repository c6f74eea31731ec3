#include "harness/op/cmd_op.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/compiler.h"
#include "core/error.h"
#include "harness/cli.h"
#include "harness/compile_configs.h"
#include "harness/config_option.h"
#include "harness/exit_codes.h"
#include "harness/measure/trial_record.h"
#include "harness/numeric_options.h"
#include "harness/op/cmd_op_bench.h"
#include "harness/op/op_prover.h"
#include "harness/op/op_suite.h"
#include "harness/op/op_tuning.h"
#include "harness/op/problem_flags.h"
#include "harness/problem_options.h"
#include "harness/stop_signals.h"
#include "harness/verify/virtual_device.h"
#include "harness/version.h"
#include "kernels/op_registry.h"
#include "results/store.h"
#include "search/strategy.h"

namespace mgpu::harness {
namespace {

// The options a command was given, on one line, for the run's provenance.
std::string arguments_of(const std::string& name, const CLI::App& cmd) {
  std::string line = name;
  for (const CLI::Option* opt : cmd.get_options())
    if (opt->count() > 0 && opt->get_name() != "--help")
      line += opt->get_type_size() == 0 ? " " + opt->get_name() : fmt::format(" {}={}", opt->get_name(), opt->as<std::string>());
  return line;
}

nlohmann::json config_json(const core::TuningConfig& c) { return nlohmann::json::parse(c.to_json()); }

// --- mgpu-tune <op> ---------------------------------------------------------------------------

struct TuneFlags {
  ArchOption arch;
  ProblemFlags problem;
  OpTuneOptions tune;
  std::string shapes;
  bool json = false, quiet = false;
};

nlohmann::json report_json(const OpTuneOptions& o, const OpTuneReport& r) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& t : r.top) top.push_back({{"config", config_json(t.config)}, {"ms", t.ms}, {"tflops", t.tflops}});
  nlohmann::json j = {{"template", r.template_name}, {"problem", o.problem.key}, {"device", r.device_name},
                      {"source", r.source}, {"run", r.run_uuid}, {"space", r.space_size}, {"valid", r.valid},
                      {"trials_this_run", r.trials_this_run}, {"trials_resumed", r.trials_resumed},
                      {"failed", r.failed}, {"verified", r.verified}, {"verify_failed", r.verify_failed},
                      {"verify_reused", r.verify_reused}, {"top", top}, {"interrupted", r.interrupted}};
  if (!r.unverified_why.empty()) j["not_verified"] = r.unverified_why;
  return j;
}

// Whether a finished tuning of one problem failed: a config failed, or (emulate) none was
// verified though some were left to do, or (model, GPU) nothing ranked.
bool tuning_failed(const OpTuneReport& r) {
  if (r.source == "emulate") return r.verify_failed > 0 || (r.verified == 0 && r.trials_resumed == 0);
  return r.top.empty() || r.verify_failed > 0;
}

void print_tune_report(const OpTuneOptions& o, const OpTuneReport& r, bool json) {
  const std::string label = r.source == "cuda" ? "measured" : r.source == "model" ? "predicted" : r.source;
  if (json) {
    std::cout << report_json(o, r).dump(2) << "\n";
    return;
  }
  fmt::print("{} on {} ({}), problem {}\n", r.template_name, r.device_name, label, o.problem.key);
  fmt::print("  {} of {} configs valid; {} trials this run, {} from earlier runs; {} failed{}\n", r.valid, r.space_size,
             r.trials_this_run, r.trials_resumed, r.failed,
             r.env_failed ? fmt::format(" ({} by the machine: retried next run)", r.env_failed) : "");
  if (r.source == "emulate")
    fmt::print("  virtual device: {} verified at the problem itself, {} failed\n", r.verified, r.verify_failed);
  else if (r.unverified_why.empty())
    fmt::print("  verified on the virtual device first: {} passed, {} failed ({} class verdicts reused from the database)\n",
               r.verified, r.verify_failed, r.verify_reused);
  else
    fmt::print("  not verified: {}\n", r.unverified_why);
  if (r.top.empty()) {
    fmt::print("  no {} result{}\n", label, r.source == "emulate" ? "s: the virtual device has no clock" : "");
  } else {
    for (std::size_t i = 0; i < r.top.size() && i < 5; ++i)
      fmt::print("  {}. {}  {:.4f} ms = {:.1f} TFLOP/s ({})\n", i + 1, r.top[i].config.to_json(), r.top[i].ms,
                 r.top[i].tflops, label);
  }
  if (r.interrupted)
    fmt::print("  interrupted: {} trials of this run committed; run the same command again to resume\n",
               r.trials_this_run);
  fmt::print("  run {} in {}\n", r.run_uuid, o.db);
}

void add_tune_command(CLI::App& app, const kernels::OpEntry& e) {
  const kernels::OpTemplate& t = e.for_arch(core::parse_arch(e.default_arch));
  auto o = std::make_shared<TuneFlags>();
  auto* cmd = app.add_subcommand(e.op, fmt::format("Tune {} ({}) for one target and problem, recording every trial",
                                                   e.op, e.archs));
  // The virtual device runs the problem itself, slowly (a default-sized attention takes minutes
  // per config): its example is the template's smallest kernel problem, as flags.
  std::string small;
  const kernels::Problem smallest = t.kernel_problems().front();
  for (const kernels::ProblemFlag& f : t.problem_flags())
    for (const auto& [name, value] : smallest.fields) {
      std::string flag = name;
      std::replace(flag.begin(), flag.end(), '_', '-');
      if (flag != f.name || value == f.default_value) continue;
      if (f.is_switch) small += value == "true" ? " --" + flag : "";
      else small += fmt::format(" --{} {}", flag, value);
    }
  cmd->footer(fmt::format("{}\nExamples:\n  mgpu-tune {} --arch {} --device model\n  mgpu-tune {} --arch {}{} --device "
                          "emulate   (run and verify each config at a small problem on the virtual device: it runs the "
                          "problem itself)\n{}",
                          t.description(), e.op, e.default_arch, e.op, e.default_arch, small, kExitCodesHelp));
  o->arch.add(*cmd);
  o->problem.add(*cmd, t);
  cmd->add_option("--device", o->tune.device,
                  "auto (the GPU, else the cost model), cuda, emulate (run and verify each config at the problem on "
                  "the virtual device: checkers for races, hazards and deadlocks; no times) or model")
      ->capture_default_str();
  cmd->add_option("--trials", o->tune.trials,
                  "Stop when this many configs have results for this problem and device (earlier and concurrent runs "
                  "included; default: every valid config)")
      ->check(whole_number(1, 1000000000));
  std::string strategies;
  for (const std::string& s : search::strategy_names()) strategies += (strategies.empty() ? "" : ", ") + s;
  cmd->add_option("--strategy", o->tune.strategy, "How configs are picked: " + strategies +
                                                      " (model: the cost model's ranking, best first)")
      ->capture_default_str();
  cmd->add_option("--seed", o->tune.seed, "Seed of the random and Optuna strategies (0 to 4294967295)")
      ->check(whole_number(0, 4294967295))
      ->capture_default_str();
  cmd->add_option("--db", o->tune.db, "Results database (created if absent)")->capture_default_str();
  cmd->add_flag("--no-verify", [o](std::int64_t) { o->tune.verify = false; },
                "With the cost model or a GPU: do not first prove each config on the virtual device at the op's "
                "problem classes (by default one that fails never ranks)");
  cmd->add_option("--seeds", o->tune.verify_seeds, "Schedules per virtual-device run (seeds 1, 4, 2, 3, ...)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_option("--timer", o->tune.timer, "How a GPU times a kernel: cupti, events or auto")->capture_default_str();
  std::string suites;
  for (const kernels::OpSuite& s : e.suites ? e.suites() : std::vector<kernels::OpSuite>{})
    suites += fmt::format("\n    {}: {}", s.name, s.description);
  cmd->add_option("--shapes", o->shapes,
                  fmt::format("Tune a suite of problems in turn, each with these options: a .csv or .json file whose "
                              "columns are the problem flags (batch, heads, kv_heads, seq_q, ...; a problem flag given "
                              "here fills what a row leaves out), or a suite built in:{}",
                              suites.empty() ? " none" : suites));
  cmd->add_flag("--json", o->json, "Print the result as JSON (no progress)");
  cmd->add_flag("--quiet,-q", o->quiet, "Print only the summary (no progress)");
  const std::string op = e.op;
  cmd->callback([o, cmd, op, e] {
    const core::ArchSpec& arch = o->arch.resolve();
    const kernels::OpTemplate& t = kernels::op_template(op, arch);
    o->tune.op = op;
    o->tune.arch = std::string(arch.name);
    std::optional<OpProblemSuite> suite;
    if (!o->shapes.empty()) {
      suite = load_op_suite(e, t, o->shapes, o->problem.given_values());
      // Every problem checked before the first runs: one no config can run ends the suite at
      // once, not after hours (emulate's memory is checked for each as the device is picked).
      for (std::size_t i = 0; i < suite->problems.size(); ++i) {
        bool any = false;
        t.space().enumerate([&](const core::TuningConfig& c) { any = any || !t.why_invalid(suite->problems[i], c); });
        if (!any)
          throw core::Error(core::ErrorKind::InvalidInput,
                            fmt::format("{}: no config of {} is valid for {}: see 'mgpu-tune space {} ...' for the rules",
                                        suite->where[i], t.name(), suite->problems[i].key, op));
      }
      o->tune.problem = suite->problems.front();
      o->tune.also_fits.assign(suite->problems.begin() + 1, suite->problems.end());
    } else {
      o->tune.problem = o->problem.problem(t);
    }
    o->tune.arguments = arguments_of(op, *cmd);
    if (o->tune.timer != "auto" && o->tune.timer != "cupti" && o->tune.timer != "events")
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--timer must be auto, cupti or events, got '{}'", o->tune.timer));
    install_stop_handlers();
    const bool progress = !o->quiet && !o->json;
    o->tune.notify = [](const std::string& note) { fmt::print(stderr, "note: {}\n", note); };
    const std::string& d = o->tune.device;
    if (d != "auto" && d != "cuda" && d != "model" && d != "emulate" && d.rfind("replay:", 0) != 0)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("unknown device '{}': choose auto, cuda, emulate or model", d));
    auto on_trial = [progress](const OpTrialLine& l) {
      if (!progress) return;
      if (!l.running.empty()) {
        fmt::print(stderr, "[{}/{}] {}  {} ...\n", l.index, l.budget, l.config.to_json(), l.running);
        return;
      }
      std::string result = l.ms ? fmt::format("{:.4f} ms", *l.ms) : l.status == "ok" ? "verified" : l.status;
      fmt::print(stderr, "[{}/{}] {}  {}{}{}\n", l.index, l.budget, l.config.to_json(), result,
                 l.verification.empty() ? "" : "; " + l.verification,
                 l.status == "ok" ? "" : ": " + l.message.substr(0, 300));
    };
    if (!suite) {
      OpTuneReport r = tune_op(o->tune, stop_requested(), on_trial);
      print_tune_report(o->tune, r, o->json);
      if (r.interrupted) {
        fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {} trials of this run are committed in {}\n",
                   sigabbrev_np(stop_exit_code() - 128), r.trials_this_run, o->tune.db);
        throw ExitWith{stop_exit_code()};
      }
      // emulate: a config failed, or none was verified (a resume with nothing left to do: exit 0)
      if (tuning_failed(r)) throw ExitWith{kExitFailure};
      return;
    }
    // A suite: each problem tuned in turn with the same options, its report as it ends.
    nlohmann::json reports = nlohmann::json::array();
    int tuned = 0, failed = 0, trials = 0, stopped_trials = 0;
    bool interrupted = false;
    for (std::size_t i = 0; i < suite->problems.size() && !interrupted; ++i) {
      o->tune.problem = suite->problems[i];
      if (progress) fmt::print(stderr, "suite {}: problem {}/{}: {}\n", suite->name, i + 1, suite->problems.size(),
                               suite->problems[i].key);
      OpTuneReport r = tune_op(o->tune, stop_requested(), on_trial);
      o->tune.also_fits.clear();  // checked once, with the first
      trials += r.trials_this_run;
      interrupted = r.interrupted;
      if (o->json) reports.push_back(report_json(o->tune, r));
      else print_tune_report(o->tune, r, false);
      if (interrupted) {
        stopped_trials = r.trials_this_run;
        break;
      }
      ++tuned;
      failed += tuning_failed(r);
    }
    const std::size_t n = suite->problems.size();
    // A stop leaves the problem it was in stopped partway (its finished trials committed), and the
    // ones after it not reached.
    const std::size_t not_reached = interrupted ? n - tuned - 1 : 0;
    if (o->json)
      std::cout << nlohmann::json{{"suite", suite->name}, {"problems", n}, {"tuned", tuned}, {"failed", failed},
                                  {"stopped_partway", interrupted ? 1 : 0}, {"not_reached", not_reached},
                                  {"duplicates_dropped", suite->duplicates_dropped},
                                  {"comment_lines", suite->comments.size()}, {"reports", reports},
                                  {"interrupted", interrupted}}
                       .dump(2)
                << "\n";
    else
      fmt::print("suite {}: {} problems, {} tuned{}{}{}{}\n", suite->name, n, tuned,
                 failed ? fmt::format(", {} with a failure", failed) : "",
                 interrupted ? fmt::format(", 1 stopped partway ({} new trials committed), {} not reached",
                                           stopped_trials, not_reached)
                             : "",
                 suite->duplicates_dropped ? fmt::format(" ({} duplicates dropped)", suite->duplicates_dropped) : "",
                 comments_note(*suite));
    if (interrupted) {
      fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {} trials of this run are committed in {}\n",
                 sigabbrev_np(stop_exit_code() - 128), trials, o->tune.db);
      throw ExitWith{stop_exit_code()};
    }
    if (failed) throw ExitWith{kExitFailure};
  });
}

// --- mgpu-tune space <op> ---------------------------------------------------------------------

struct SpaceFlags {
  ArchOption arch;
  ProblemFlags problem;
  bool json = false;
};

void run_space(const std::string& op, const SpaceFlags& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  const kernels::OpTemplate& t = kernels::op_template(op, arch);
  const kernels::Problem p = o.problem.problem(t);
  const core::ParamSpace space = t.space();
  std::uint64_t total = 0;
  std::map<std::string, std::pair<std::uint64_t, std::string>> rejected;  // rule -> count, first reason
  std::vector<std::pair<double, core::TuningConfig>> valid;
  const core::DeviceSpec& device = arch.default_device();
  space.enumerate([&](const core::TuningConfig& c) {
    ++total;
    if (auto r = t.why_invalid(p, c)) {
      auto& [n, reason] = rejected[r->rule];
      if (n++ == 0) reason = r->reason;
      return;
    }
    valid.emplace_back(t.predict_ms(p, c, device), c);
  });
  std::stable_sort(valid.begin(), valid.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (o.json) {
    nlohmann::json params = nlohmann::json::array(), ranked = nlohmann::json::array(), rules = nlohmann::json::object();
    for (const core::Param& prm : space.params()) {
      nlohmann::json dom = nlohmann::json::array();
      for (const core::ParamValue& v : prm.domain) {
        if (std::holds_alternative<std::int64_t>(v)) dom.push_back(std::get<std::int64_t>(v));
        else dom.push_back(std::get<std::string>(v));
      }
      params.push_back({{"name", prm.name}, {"domain", dom}, {"help", prm.help}});
    }
    for (const auto& [ms, c] : valid)
      ranked.push_back({{"config", config_json(c)}, {"predicted_ms", ms}, {"predicted_tflops", p.flops / (ms * 1e-3) / 1e12}});
    for (const auto& [rule, v] : rejected) rules[rule] = {{"count", v.first}, {"example", v.second}};
    nlohmann::json j = {{"template", t.name()}, {"arch", arch.name}, {"problem", p.key}, {"parameters", params},
                        {"total", total}, {"valid", valid.size()}, {"rejected", rules},
                        {"default_config", config_json(t.default_config())}, {"model_device", device.name},
                        {"ranking", ranked}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  fmt::print("{} for {} ({}), problem {}\n", t.name(), arch.name, arch.family, p.key);
  for (const core::Param& prm : space.params()) {
    std::string dom;
    for (const core::ParamValue& v : prm.domain) dom += (dom.empty() ? "" : ", ") + core::to_string(v);
    fmt::print("  {:<22} {{{}}}\n      {}\n", prm.name, dom, prm.help);
  }
  fmt::print("{} configs, {} valid, {} rejected:\n", total, valid.size(), total - valid.size());
  for (const auto& [rule, v] : rejected) fmt::print("  {:<22} {:>6}  e.g. {}\n", rule, v.first, v.second);
  fmt::print("default config: {}\n", t.default_config().to_json());
  if (!valid.empty()) {
    fmt::print("valid configs by the cost model's prediction on {} (not measured):\n", device.name);
    for (const auto& [ms, c] : valid)
      fmt::print("  {:>10.4f} ms {:>8.1f} TFLOP/s  {}\n", ms, p.flops / (ms * 1e-3) / 1e12, c.to_json());
  }
}

void add_space_subcommand(CLI::App& space, const kernels::OpEntry& e) {
  const kernels::OpTemplate& t = e.for_arch(core::parse_arch(e.default_arch));
  auto o = std::make_shared<SpaceFlags>();
  auto* cmd = space.add_subcommand(e.op, fmt::format("The {} template's space for a target and problem ({})", e.op, e.archs));
  o->arch.add(*cmd);
  o->problem.add(*cmd, t);
  cmd->add_flag("--json", o->json, "Print JSON");
  const std::string op = e.op;
  cmd->callback([o, op] { run_space(op, *o); });
}

// --- mgpu-tune compile <op> -------------------------------------------------------------------

struct CompileOpFlags {
  ArchOption arch;
  ProblemFlags problem;
  std::string config;
  bool all = false;
  CompileFlags compile;
};

void run_compile(const std::string& op, const CompileOpFlags& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  const kernels::OpTemplate& t = kernels::op_template(op, arch);
  if (o.all == !o.config.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "give exactly one of --config JSON and --all");
  // --all without problem flags: every kernel the template builds (the whole space's binaries).
  const bool every_kernel = o.all && !o.problem.given();
  const std::vector<kernels::Problem> problems =
      every_kernel ? t.kernel_problems() : std::vector<kernels::Problem>{o.problem.problem(t)};
  std::map<std::string, kernels::Problem> by_key;
  std::vector<ConfigToCompile> configs;
  for (const kernels::Problem& p : problems) {
    by_key.emplace(p.key, p);
    auto add = [&](const core::TuningConfig& c) { configs.push_back({c, p.key, p.key + " " + c.to_json()}); };
    if (o.all) {
      t.space().enumerate([&](const core::TuningConfig& c) {
        if (!t.why_invalid(p, c)) add(c);
      });
    } else {
      core::TuningConfig c = config_from_user(t, o.config);
      t.require_valid(p, c);
      add(c);
    }
  }
  compile_configs(arch, std::string(t.name()),
                  every_kernel ? std::nullopt : std::optional<std::string>(problems.front().key), configs,
                  [&](const ConfigToCompile& c) {
                    return KernelBuild{t.build_mlir(by_key.at(c.problem_key), c.config), t.kernel_name(), {}, {}};
                  },
                  o.compile);
}

void add_compile_subcommand(CLI::App& compile, const kernels::OpEntry& e) {
  const kernels::OpTemplate& t = e.for_arch(core::parse_arch(e.default_arch));
  auto o = std::make_shared<CompileOpFlags>();
  auto* cmd = compile.add_subcommand(
      e.op, fmt::format("Compile {} template configs in parallel and report each kernel's registers and spills.\n"
                        "Examples:\n"
                        "  mgpu-tune compile {} --arch {} --all --sass   # every valid config of every kernel, "
                        "with what its SASS shows\n"
                        "  mgpu-tune compile {} --arch {} --config '{}' --emit-dir out/",
                        e.op, e.op, e.default_arch, e.op, e.default_arch, t.default_config().to_json()));
  o->arch.add(*cmd);
  o->problem.add(*cmd, t);
  cmd->add_option("--config", o->config, "One config as JSON; fields left out take the template's defaults");
  cmd->add_flag("--all", o->all, "Every valid config: at the problem given, or without problem flags at every kernel "
                                 "the template builds");
  o->compile.add(*cmd);
  const std::string op = e.op;
  cmd->callback([o, op] { run_compile(op, *o); });
}

// --- mgpu-tune verify <op> --------------------------------------------------------------------

struct VerifyFlags {
  ArchOption arch;
  ProblemFlags problem;
  std::string config;
  bool all = false, json = false, quiet = false;
  int seeds = 2;
  std::string db = "mgpu-tune.db";
};

void run_verify(const std::string& op, const VerifyFlags& o, const std::string& arguments) {
  const core::ArchSpec& arch = o.arch.resolve();
  const kernels::OpTemplate& t = kernels::op_template(op, arch);
  if (!o.config.empty() && o.all)
    throw core::Error(core::ErrorKind::InvalidInput, "--config names one config and --all every valid one: give one of them");
  if (o.config.empty() && !o.all)  // as `verify matmul`: a gate says what it verifies
    throw core::Error(core::ErrorKind::InvalidInput, "give exactly one of --config JSON and --all");
  if (auto why = why_not_verifiable(arch)) throw core::Error(core::ErrorKind::InvalidInput, *why);
  // Every kernel the template builds, unless a problem was given.
  const std::vector<kernels::Problem> problems =
      o.problem.given() || !o.all ? std::vector<kernels::Problem>{o.problem.problem(t)} : t.kernel_problems();
  std::optional<core::TuningConfig> one;
  if (!o.config.empty()) {
    one = config_from_user(t, o.config);
    t.require_valid(problems.front(), *one);
  }
  // --all at a problem no config can run verifies nothing: a gate that passed on nothing.
  if (o.all && o.problem.given()) {
    std::optional<kernels::Rejection> first;
    bool any = false;
    t.space().enumerate([&](const core::TuningConfig& c) {
      auto r = t.why_invalid(problems.front(), c);
      any = any || !r;
      if (r && !first) first = r;
    });
    if (!any)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("no config of {} is valid at {}: nothing to verify (e.g. {}: {})", t.name(),
                                    problems.front().key, first ? first->rule : "", first ? first->reason : ""));
  }
  check_virtual_device_knobs("the virtual device");
  std::vector<std::string> worker_env = virtual_device_environment(arch, "verify " + op);
  (void)core::CompileOptions::from_environment();
  install_stop_handlers();

  // What there is to verify, counted first: a stopped run says how many it did not reach.
  int verified = 0, failed = 0, reused = 0, ran = 0, configs = 0;
  std::vector<std::vector<core::TuningConfig>> todos;
  for (const kernels::Problem& p : problems) {
    std::vector<core::TuningConfig>& todo = todos.emplace_back();
    if (one) {
      todo.push_back(*one);
    } else {
      t.space().enumerate([&](const core::TuningConfig& c) {
        if (!t.why_invalid(p, c)) todo.push_back(c);
      });
    }
    configs += static_cast<int>(todo.size());
  }
  // The device the configs are proven for: the arch's default (as `verify matmul`).
  const int sm_count = virtual_environment(arch).sm_count;

  results::Store store = results::Store::open(o.db, results::OpenMode::ReadWrite);
  // Every verdict row the prover may read, judged before a run is opened: a damaged one refused
  // here leaves no unfinished run behind (round 16, F1). A config's classes may be its own.
  const results::TemplateId tmpl = template_id(t);
  std::set<std::string> checked;
  for (std::size_t pi = 0; pi < problems.size(); ++pi)
    for (const core::TuningConfig& c : todos[pi])
      for (const kernels::VerificationProblem& v : t.verification_problems(problems[pi], c, sm_count))
        if (v.unrunnable_why.empty() && checked.insert(v.problem.key).second) store.check_rows_of(tmpl, v.problem.key);
  const std::int64_t run = store.begin_run("verify", arguments, version_string());
  OpProver prover(store, run, t, o.seeds, worker_env, sm_count);
  nlohmann::json rows = nlohmann::json::array();
  bool interrupted = false;
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    const kernels::Problem& p = problems[pi];
    for (const core::TuningConfig& c : todos[pi]) {
      if (stop_requested()) {
        interrupted = true;
        break;
      }
      OpProof proof;
      std::string hash;
      try {
        hash = prover.kernel_hash(p, c);
      } catch (const core::Error& e) {
        if (stop_requested()) {  // the stop reached ptxas too: nothing is said of the config
          interrupted = true;
          break;
        }
        if (e.kind() == core::ErrorKind::IO || e.kind() == core::ErrorKind::Unavailable) throw;  // the machine's
        proof.ok = false;
        proof.status = "compile_error";
        proof.message = e.what();
      }
      // Outside the compile's catch: a damaged verdict row is the database's error (exit 2), not
      // a compile_error of the config (round 13, F8).
      if (!hash.empty()) proof = prover.prove(p, c, hash);
      if (!proof.ok && stop_requested()) {  // broken by the stop, not failed: nothing counted
        interrupted = true;
        break;
      }
      (proof.ok ? verified : failed) += 1;
      reused += proof.reused;
      ran += proof.ran;
      const std::string classes = joined_classes(t, p, c, sm_count);
      if (o.json) {
        rows.push_back({{"problem", p.key}, {"config", config_json(c)}, {"status", proof.status}, {"classes", classes},
                        {"ran", proof.ran}, {"reused", proof.reused}, {"message", proof.message}, {"wall_s", proof.wall_s}});
      } else if (!proof.ok || !o.quiet) {
        fmt::print("{:<13} {}  {}  ({} classes: {} run, {} reused, {:.1f} s){}\n", proof.ok ? "verified" : proof.status,
                   p.key, c.to_json(), proof.ran + proof.reused, proof.ran, proof.reused, proof.wall_s,
                   proof.ok ? "" : "\n    " + proof.message);
      }
    }
    if (interrupted) break;
  }
  store.end_run(run);
  if (o.json) {
    std::cout << nlohmann::json{{"template", t.name()}, {"configs", configs}, {"verified", verified}, {"failed", failed},
                                {"not_reached", configs - verified - failed}, {"class_runs", ran},
                                {"class_reused", reused}, {"verifications", rows}}.dump(2)
              << "\n";
  } else {
    fmt::print("{}: {} configs at {} problems: {} verified, {} failed{}; {} class runs on the virtual device, {} verdicts "
               "reused from {}\n", t.name(), configs, problems.size(), verified, failed,
               interrupted ? fmt::format(", {} not reached (stopped: the same command resumes)", configs - verified - failed)
                           : "",
               ran, reused, o.db);
  }
  if (interrupted) {
    fmt::print(stderr, "mgpu-tune: stopped by SIG{}: the verifications that finished are committed in {}\n",
               sigabbrev_np(stop_exit_code() - 128), o.db);
    throw ExitWith{stop_exit_code()};
  }
  if (failed > 0) throw ExitWith{kExitFailure};
}

void add_verify_subcommand(CLI::App& verify, const kernels::OpEntry& e) {
  const kernels::OpTemplate& t = e.for_arch(core::parse_arch(e.default_arch));
  auto o = std::make_shared<VerifyFlags>();
  auto* cmd = verify.add_subcommand(
      e.op, fmt::format("Run {} configs on the virtual device at the op's problem classes, against a float64 CPU "
                        "reference, with the race, hazard and deadlock checkers on, and record each outcome. A "
                        "verification counts for the compiled kernel and a class; a run finds earlier ones in --db "
                        "instead of redoing them.\nExamples:\n"
                        "  mgpu-tune verify {} --arch {} --all            # every valid config of every kernel\n"
                        "  mgpu-tune verify {} --arch {} --all --head-dim 128 --causal   # one kernel family",
                        e.op, e.op, e.default_arch, e.op, e.default_arch));
  o->arch.add(*cmd);
  o->problem.add(*cmd, t);
  cmd->add_option("--config", o->config, "One config as JSON; fields left out take the template's defaults");
  cmd->add_flag("--all", o->all, "Every valid config: at the problem given, or without problem flags at every kernel "
                                 "the template builds");
  cmd->add_option("--seeds", o->seeds, "Schedules per verification (seeds 1, 4, 2, 3, ...)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_option("--db", o->db, "Results database (created if absent)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print every verification as JSON");
  cmd->add_flag("--quiet,-q", o->quiet, "Print only failures and the summary");
  const std::string op = e.op;
  cmd->callback([o, cmd, op] { run_verify(op, *o, arguments_of("verify " + op, *cmd)); });
}

}  // namespace

void add_op_commands(CLI::App& app) {
  for (const kernels::OpEntry& e : kernels::ops()) {
    if (e.dedicated_commands) continue;  // matmul's commands are its own (harness/cmd_matmul.cc, ...)
    add_tune_command(app, e);
    add_space_subcommand(*app.get_subcommand("space"), e);
    add_verify_subcommand(*app.get_subcommand("verify"), e);
    add_compile_subcommand(*app.get_subcommand("compile"), e);
    add_op_bench_subcommand(*app.get_subcommand("bench"), e);
  }
}

}  // namespace mgpu::harness
