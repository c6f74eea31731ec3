#include "harness/cmd_matmul.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/error.h"
#include "harness/cli.h"
#include "harness/numeric_options.h"
#include "harness/problem_options.h"
#include "harness/tune/progress_printer.h"
#include "harness/tune/shape_suite.h"
#include "harness/stop_signals.h"
#include "harness/tune/tune_suite.h"
#include "harness/tune/tuning_loop.h"
#include "kernels/matmul_suites.h"
#include "kernels/matmul_template.h"
#include "search/python_runtime.h"
#include "search/strategy.h"

namespace mgpu::harness {
namespace {

// Stopped while the space was walked, before the device was chosen and the database opened:
// no run was recorded, and the database may not exist at all (a first run).
bool stopped_before_start(const TuneReport& r) { return r.interrupted && r.run_uuid.empty(); }

// What was written before a stop, for the line on stderr: trials committed in the database, or
// -- when no run had begun -- that nothing was, never a database that is not there.
std::string written_before_stop(int committed, bool any_run_began, const std::string& db) {
  std::error_code ec;
  if (!any_run_began)
    return fmt::format("it came before the first trial: nothing was written{}", std::filesystem::exists(db, ec)
                                                                                    ? fmt::format(" to {}", db)
                                                                                    : fmt::format(" ({} was not created)", db));
  return fmt::format("{} trials of this run are committed in {}", committed, db);
}

// What a run's results are, by where they came from (one shape or a suite).
std::string results_label(const std::string& source) {
  return source == "cuda"      ? "measured"
         : source == "model"   ? "PREDICTED (model; nothing was measured)"
         : source == "emulate" ? "VERIFIED on the virtual device (no times)"
         : source == "replay"  ? "replayed"
                               : "stored";  // a run stopped before its device was picked (--device auto)
}

void print_report(const TuneOptions& o, const TuneReport& r, bool json) {
  if (json) {
    nlohmann::json top = nlohmann::json::array();
    for (const RankedConfig& c : r.top)
      top.push_back({{"config", nlohmann::json::parse(c.config.to_json())}, {"median_ms", c.median_ms},
                     {"noise", c.noise}, {"tflops", c.tflops}});
    std::cout << nlohmann::json{{"run", r.run_uuid}, {"problem", r.problem.empty() ? o.problem.key() : r.problem}, {"arch", o.arch},
                                {"device", r.device_name}, {"source", r.source}, {"note", r.note},
                                {"strategy", o.strategy}, {"trials_this_run", r.trials_this_run},
                                {"trials_resumed", r.trials_resumed}, {"failed", r.failed}, {"env_failed", r.env_failed},
                                {"taken_elsewhere", r.taken_elsewhere}, {"study_trials", r.study_trials}, {"wall_s", r.wall_s},
                                {"interrupted", r.interrupted}, {"exhausted", r.exhausted}, {"top", top},
                                {"verified", r.verified}, {"verify_failed", r.verify_failed},
                                {"verify_reused", r.verify_reused}, {"unverified_why", r.unverified_why},
                                {"lints", {{"evidence_recorded", r.evidence_recorded}, {"evidence_reused", r.evidence_reused},
                                           {"linted", r.linted}, {"unavailable_why", r.lints_unavailable_why}}},
                                {"configs_per_minute", r.configs_per_minute},
                                {"confirmation", {{"passes", r.confirm_passes}, {"measurements", r.confirm_measurements},
                                                  {"seconds", r.confirm_s}, {"ended", r.confirm_ended}}},
                                {"db", o.db}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  if (stopped_before_start(r)) {
    // No device was chosen and nothing stored: not a summary "on <no device>" of results "in" a
    // database that may not exist.
    fmt::print("{}: stopped before the first trial (while walking the config space); run the same command again to "
               "tune it\n", o.problem.key());
    return;
  }
  const std::string label = results_label(r.source);
  fmt::print("{} on {}: {} new trials ({} resumed, {} failed) in {:.1f} s with {}; results {} in {}\n",
             r.problem.empty() ? o.problem.key() : r.problem, r.device_name, r.trials_this_run, r.trials_resumed, r.failed, r.wall_s, o.strategy, label,
             o.db);
  if (r.trials_this_run > 0 && r.configs_per_minute > 0)
    fmt::print("{:.1f} configs per minute of search (compiles and verifications included)\n", r.configs_per_minute);
  if (r.confirm_measurements > 0)
    fmt::print("the best {} re-timed strictly, interleaved: {} pass(es), {} measurements, {:.1f} s ({})\n",
               std::min<int>(o.top, static_cast<int>(r.top.size())), r.confirm_passes, r.confirm_measurements,
               r.confirm_s, r.confirm_ended);
  if (r.env_failed)
    fmt::print("{} trials failed for the machine's sake (env_error: see the messages with --verbose); they do not "
               "count and a resumed run tries them again\n", r.env_failed);
  if (r.taken_elsewhere)
    fmt::print("{} configs were left to concurrent runs on {}; the study has {} of {} trials\n", r.taken_elsewhere,
               o.db, r.study_trials, o.trials);
  if (r.source == "emulate") {
    // The virtual device verifies; it has no clock, so nothing is ranked by time.
    fmt::print("verified on the virtual device: {} passed, {} failed (see 'mgpu-tune trials --db {}' for each "
               "config's checker findings); no times: the virtual device has no clock\n",
               r.verified, r.verify_failed, o.db);
    if (r.budget_taken_elsewhere)
      fmt::print("the study's budget of {} trials is held by concurrent runs on {} (their claims): nothing was left for "
                 "this run to do\n", o.trials, o.db);
    if (r.interrupted) fmt::print("interrupted: run the same command again to resume\n");
    return;
  }
  if (r.verified + r.verify_failed > 0)
    fmt::print("verified on the virtual device before {}: {} passed ({} by earlier verifications in {}), {} failed "
               "and never ranked{}\n", r.source == "cuda" ? "running on the GPU" : "predicting", r.verified,
               r.verify_reused, o.db, r.verify_failed,
               r.verify_failed ? fmt::format(" (their reports: 'mgpu-tune trials --db {} --source emulate')", o.db) : "");
  else if (!r.unverified_why.empty())
    fmt::print("not verified: {}\n", r.unverified_why);
  // Issue 19: the SASS evidence behind the predictions (and the records best/report show).
  if (!r.lints_unavailable_why.empty())
    fmt::print("SASS lints not available: {}{}\n", r.lints_unavailable_why,
               r.source == "model" ? "; predictions carry no SASS lint penalties (bank conflicts a verification "
                                     "counted still do)"
                                   : "");
  else if (r.evidence_recorded + r.evidence_reused > 0)
    fmt::print("SASS evidence: {} kernels disassembled, {} found in {}{}\n", r.evidence_recorded, r.evidence_reused, o.db,
               r.source == "model" ? fmt::format("; {} configs predicted with lint penalties (see 'mgpu-tune best "
                                                 "--include-model')", r.linted)
                                   : "");
  if (r.top.empty()) {
    if (r.budget_taken_elsewhere)  // round 20, F53: not a failure, nothing was attempted
      fmt::print("the study's budget of {} trials is held by concurrent runs on {} (their claims): nothing was left for "
                 "this run to do; their results land there as they finish ('mgpu-tune best --db {}')\n",
                 o.trials, o.db, o.db);
    else if (r.trials_this_run == 0 && r.trials_resumed == 0 && o.time_budget_s > 0 && !r.interrupted)
      fmt::print("the time budget ({:g} s) ended before any trial ran: no config produced a result\n", o.time_budget_s);
    else if (r.trials_this_run == 0 && r.trials_resumed == 0 && r.interrupted)
      fmt::print("stopped before any trial ran: no config produced a result\n");  // none failed: none ran
    else
      fmt::print("none of the trials succeeded: no config produced a result\n");
    if (r.interrupted) fmt::print("interrupted: run the same command again to resume\n");
    return;
  }
  const double best = r.top.front().median_ms;
  for (size_t i = 0; i < r.top.size(); ++i) {
    const RankedConfig& c = r.top[i];
    // Within the two results' noise of the winner: a tie, not a ranking.
    bool tie = i > 0 && (c.median_ms - best) / best <= c.noise + r.top.front().noise;
    // A T4 landscape's kernel is no matmul of this problem: no FLOP rate, no peak to compare with.
    std::string rate = c.tflops > 0 ? fmt::format("  {:.1f} TFLOP/s", c.tflops) : "";
    if (c.tflops > 0 && r.peak_tflops > 0) rate += fmt::format(" ({:.0f}% of {:.0f} peak)", 100 * c.tflops / r.peak_tflops, r.peak_tflops);
    fmt::print("  {}{} {:.4f} ms{}  {}\n", tie ? "=" : "#", i + 1, c.median_ms, rate, c.config.to_json());
  }
  if (r.interrupted) fmt::print("interrupted: run the same command again to resume\n");
}

void print_suite_report(const TuneOptions& o, const ShapeSuite& suite, const SuiteReport& r, bool json) {
  if (json) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const SuiteShapeResult& s : r.shapes) {
      nlohmann::json j = {{"problem", s.problem.key()}};
      if (!s.covered_by.empty()) j["covered_by"] = s.covered_by;
      if (s.report) {
        j["trials_this_run"] = s.report->trials_this_run;
        j["interrupted"] = s.report->interrupted;
        j["trials_resumed"] = s.report->trials_resumed;
        j["source"] = s.report->source;
        j["warm_started_from"] = s.report->warm_started_from;
        if (!s.report->top.empty())
          j["best"] = {{"config", nlohmann::json::parse(s.report->top.front().config.to_json())},
                       {"median_ms", s.report->top.front().median_ms}, {"tflops", s.report->top.front().tflops}};
      }
      shapes.push_back(j);
    }
    std::cout << nlohmann::json{{"suite", suite.name}, {"arch", o.arch}, {"db", o.db}, {"interrupted", r.interrupted},
                                {"shapes", shapes}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  int tuned = 0, covered = 0, stopped = 0;
  std::string source;
  for (const SuiteShapeResult& s : r.shapes) {
    // The shape the stop came in: not tuned, resumed next time -- unless its study had its whole
    // budget when the stop arrived (the last trial committed just before it): that one is tuned.
    if (s.report && s.report->interrupted && s.report->study_trials < o.trials) {
      ++stopped;
      if (source.empty()) source = s.report->source;
      fmt::print("{:<36} stopped partway: {} new trials committed ({} resumed)\n", s.problem.key(),
                 s.report->trials_this_run, s.report->trials_resumed);
    } else if (s.report) {
      ++tuned;
      source = s.report->source;
      const TuneReport& t = *s.report;
      // The virtual device verifies and has no clock: its result is the verdicts, not a time.
      std::string best = t.source == "emulate" ? fmt::format("verified {}, failed {}", t.verified, t.verify_failed)
                         : t.top.empty()        ? "no result"
                                                : fmt::format("{:.1f} TFLOP/s {}", t.top.front().tflops,
                                                              t.top.front().config.to_json());
      fmt::print("{:<36} {:>3} new trials ({} resumed{})  {}\n", s.problem.key(), t.trials_this_run, t.trials_resumed,
                 t.warm_started_from.empty() ? "" : fmt::format(", warm start from {}", t.warm_started_from.size()), best);
    } else if (!s.covered_by.empty()) {
      ++covered;
      fmt::print("{:<36} same padded tile grids as {}: its config\n", s.problem.key(), s.covered_by);
    } else {
      fmt::print("{:<36} not reached\n", s.problem.key());
    }
  }
  // A suite stopped before any shape's device was picked: the label follows --device, never a
  // default ("replayed" of a --device model run).
  if (source.empty())
    source = o.device.rfind("replay:", 0) == 0 ? std::string("replay")
             : (o.device == "cuda" || o.device == "model" || o.device == "emulate") ? o.device
                                                                                      : std::string();
  const std::string label = results_label(source);
  fmt::print("suite {}: {} shapes, {} tuned, {} covered by a bucket{}{}; results {} in {}\n", suite.name, r.shapes.size(),
             tuned, covered, stopped ? fmt::format(", {} stopped partway", stopped) : "",
             suite.duplicates_dropped ? fmt::format(", {} duplicate rows dropped", suite.duplicates_dropped) : "",
             label, o.db);
  if (r.interrupted) fmt::print("interrupted: run the same command again to resume\n");
}

}  // namespace

void add_matmul_command(CLI::App& app) {
  struct Options {
    ArchOption arch;
    MatmulProblemOptions problem;
    TuneOptions tune;
    bool json = false;
    bool no_compile = false;
    std::string shapes;
    bool bucket = false;
    bool quiet = false, verbose = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("matmul", "Tune C = A . B for one target and problem (or a suite of shapes), "
                                           "recording every trial");
  o->arch.add(*cmd);
  o->problem.add(*cmd);
  cmd->add_option("--strategy", o->tune.strategy,
                  "exhaustive, random, tpe or cmaes (Optuna, after 10 warm-up picks: the model's best, else random), "
                  "tpe-native (TPE without Python: never asks an invalid config, ~0.1 ms a step) or model "
                  "(cost-model ranking); the README's 'Search strategies on measured landscapes' compares them")
      ->capture_default_str();
  cmd->add_option("--trials", o->tune.trials, "Stop when this many configs have results for this problem and "
                                              "device (earlier and concurrent runs included; warm-start configs count)")
      ->check(whole_number(1, 1000000000))  // an int: CLI11 would refuse 2^31 as "Could not convert"
      ->capture_default_str();
  cmd->add_option("--time-budget", o->tune.time_budget_s, "Stop after searching this many seconds (0: no limit)")
      ->check(finite_number(0))
      ->capture_default_str();
  cmd->add_option("--db", o->tune.db, "Results database (created if absent)")->capture_default_str();
  cmd->add_option("--device", o->tune.device,
                  "auto (the GPU, else the cost model), cuda, emulate (run and verify each config on the virtual sm_90a or sm_100a "
                  "device: checkers for races, hazards and deadlocks; no times), model, or replay:DB")
      ->capture_default_str();
  cmd->add_option("--seed", o->tune.seed, "Seed of the random and Optuna strategies (0 to 4294967295: Optuna's "
                  "samplers take 32-bit seeds)")
      ->check(whole_number(0, 4294967295))
      ->capture_default_str();
  cmd->add_option("--top", o->tune.top, "How many of the best configs to report (on a GPU they are re-timed "
                  "strictly, interleaved, until their ranking is settled)")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_option("--confirm-budget", o->tune.confirm_budget_s,
                  "Seconds at most for re-timing the best configs on a GPU (default: a quarter of the search's "
                  "time, at least 30); it ends sooner once their ranking is settled")
      ->check(finite_number(0));
  cmd->add_flag("--no-compile", o->no_compile,
                "With the cost model: rank configs without compiling them first (a faster dry run that cannot "
                "catch configs the compiler refuses)");
  cmd->add_flag("--no-verify", [o](std::int64_t) { o->tune.verify = false; },
                "With the cost model: predict configs without first proving them on the virtual device (by default "
                "each config's kernel is run there once per problem class, with the race, hazard and deadlock "
                "checkers, and one that fails never ranks; see 'mgpu-tune verify')");
  cmd->add_option("--preflight", o->tune.preflight,
                  "On a GPU: 'emulate' proves each config on the virtual device before the GPU runs it, so a kernel "
                  "that would hang or fault never takes down a GPU worker");
  cmd->add_option("--timer", o->tune.timer,
                  "How the GPU times a kernel: cupti (the GPU's own start/end timestamps), events (CUDA events "
                  "around the launch) or auto (CUPTI when it loads)")
      ->capture_default_str();
  std::string suites;
  for (const kernels::NamedSuite& s : kernels::named_suites()) suites += fmt::format("; {} ({})", s.name, s.description);
  cmd->add_option("--shapes", o->shapes,
                  "Tune a suite of shapes in turn (--trials per shape), each warm-started from those before it: a "
                  ".csv (m,n,k[,dtype,out_dtype,layout] per line) or .json file, or a named suite" + suites);
  cmd->add_flag("--bucket", o->bucket, "With --shapes: tune once the shapes that run the same padded tile grids");
  cmd->add_option("--warm-start", o->tune.warm_start_shapes,
                  "Measure first the best configs of this many nearest shapes already tuned in --db (0: off); "
                  "they count towards --trials")
      ->check(whole_number(0, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the result as JSON (no progress unless --verbose)");
  auto* quiet = cmd->add_flag("--quiet,-q", o->quiet, "Print only the final summary and errors (no progress)");
  cmd->add_flag("--verbose,-v", o->verbose,
                "Also print a line per trial: its config, result or failure message, and its times")
      ->excludes(quiet);
  cmd->callback([o, &app, cmd] {
    o->tune.compile_predicted = !o->no_compile;
    o->tune.arch = std::string(o->arch.resolve().name);
    o->tune.problem = o->problem.resolve();
    // The options as given, on one line ("matmul --arch=\"sm_90a\" --m=4096 ..."), for the run's provenance.
    std::string given = app.config_to_str(false, false), line = "matmul";
    for (size_t at = 0; at < given.size();) {
      size_t end = given.find('\n', at);
      if (end == std::string::npos) end = given.size();
      std::string item = given.substr(at, end - at);
      if (item.rfind("matmul.", 0) == 0) item = item.substr(7);
      if (!item.empty()) line += " --" + item;
      at = end + 1;
    }
    o->tune.arguments = line;
    install_stop_handlers();
    search::show_python_tracebacks(o->verbose);  // an embedded-Python failure: one line, its traceback with -v
    Verbosity v = o->verbose ? Verbosity::Verbose : o->quiet || o->json ? Verbosity::Quiet : Verbosity::Normal;
    auto printer = std::make_shared<ProgressPrinter>(v, isatty(STDERR_FILENO) != 0);
    auto progress = [printer](const Progress& p) { (*printer)(p); };
    o->tune.notify = [printer](const std::string& note) {
      printer->finish();
      fmt::print(stderr, "note: {}\n", note);
    };
    if (!o->shapes.empty()) {
      for (const char* flag : {"--m", "--n", "--k"})
        if (cmd->count(flag))
          throw core::Error(core::ErrorKind::InvalidInput,
                            fmt::format("--shapes gives the shapes: drop {} (--dtype, --out-dtype and --layout still "
                                        "fill what the suite leaves out)", flag));
      ShapeSuite suite = load_shape_suite(o->shapes, o->tune.problem);
      check_suite_shapes(suite, kernels::matmul_template(core::parse_arch(o->tune.arch)));  // by file and line
      SuiteReport r = tune_suite(o->tune, suite, o->bucket, stop_requested(), progress);
      printer->finish();
      print_suite_report(o->tune, suite, r, o->json);
      if (r.interrupted) {
        int committed = 0;
        bool began = false;
        for (const SuiteShapeResult& sr : r.shapes) {
          committed += sr.report ? sr.report->trials_this_run : 0;
          began = began || (sr.report && !stopped_before_start(*sr.report));
        }
        fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {}\n", sigabbrev_np(stop_exit_code() - 128),
                   written_before_stop(committed, began, o->tune.db));
        throw ExitWith{stop_exit_code()};
      }
      for (const SuiteShapeResult& sr : r.shapes) {
        if (!sr.report) continue;
        if (sr.report->source == "emulate") {  // as for one shape: a config failed, or none was verified
          // (a resumed run with nothing left to do verified none, and failed none: exit 0)
          if (sr.report->verify_failed > 0 ||
              (sr.report->verified == 0 && sr.report->trials_resumed == 0 && !sr.report->budget_taken_elsewhere))
            throw ExitWith{core::kExitFailure};
        } else if (sr.report->top.empty() && !sr.report->budget_taken_elsewhere) {
          throw ExitWith{core::kExitFailure};  // a shape with no result
        }
      }
      return;
    }
    if (o->bucket) throw core::Error(core::ErrorKind::InvalidInput, "--bucket groups the shapes of --shapes: give a suite");
    TuneReport r = tune(o->tune, stop_requested(), progress);
    printer->finish();
    print_report(o->tune, r, o->json);
    if (r.interrupted) {
      fmt::print(stderr, "mgpu-tune: stopped by SIG{}: {}\n", sigabbrev_np(stop_exit_code() - 128),
                 written_before_stop(r.trials_this_run, !stopped_before_start(r), o->tune.db));
      throw ExitWith{stop_exit_code()};
    }
    if (r.source == "emulate") {
      // A config failed on the virtual device, or none was verified (a resumed run with nothing
      // left to do verified none this time, and failed none).
      if (r.verify_failed > 0 || (r.verified == 0 && r.trials_resumed == 0 && !r.budget_taken_elsewhere))
        throw ExitWith{core::kExitFailure};
    } else if (r.top.empty() && !r.budget_taken_elsewhere) {
      throw ExitWith{core::kExitFailure};  // every trial failed: the work failed
    }
  });
}

}  // namespace mgpu::harness
