#include "harness/cmd_results.h"

#include <array>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/compile_cache.h"
#include "core/error.h"
#include "harness/cli.h"
#include "harness/cmd_trials.h"
#include "harness/current_templates.h"
#include "harness/exit_codes.h"
#include "harness/numeric_options.h"
#include "harness/stop_signals.h"
#include "harness/measure/trial_record.h"
#include "harness/op/op_suite.h"
#include "harness/pack/export_pack.h"
#include "harness/tune/shape_suite.h"
#include "kernels/matmul_template.h"
#include "kernels/op_registry.h"
#include "results/export.h"
#include "results/kernel_lints.h"
#include "results/t4_store.h"
#include "results/merge.h"
#include "results/regress.h"
#include "results/store.h"
#include "results/verified_best.h"

namespace mgpu::harness {
namespace {

// Why a database that holds trials ranks none: its virtual-device verifications prove configs
// but hold no times. "" when it holds none.
// `include_model` false: also the trials left out for not being GPU measurements of ours
// (predicted, imported, replayed), which --include-model brings in (round 19, F39: an imported
// landscape exported as "wrote 0 trials", unsaid why).
std::string untimed_note(results::Store& s, bool include_model = true) {
  int n = 0;
  std::map<std::string, int> other;
  for (const results::TrialRow& t : s.trials()) {
    n += t.source == "emulate";
    if (t.source != "emulate" && t.source != "cuda") ++other[t.source];
  }
  std::string note = n ? fmt::format(" (it holds {} virtual-device verifications: they prove configs and hold no times, so "
                                     "they rank nothing; 'mgpu-tune trials --db {} --source emulate' lists them)",
                                     n, s.path())
                       : "";
  if (!include_model && !other.empty()) {
    std::string held;
    for (const auto& [source, count] : other) held += fmt::format("{}{} {}", held.empty() ? "" : ", ", count, source);
    note += fmt::format(" (it holds trials that are no GPU measurements of this tool -- {} --, which --include-model "
                        "adds, labelled)", held);
  }
  return note;
}

// Why a json or cpp export of a database with timed rows wrote none: every such row is of a
// template this binary does not build (an imported landscape's, another program's, an older
// version of ours), and those exports serve the current templates only (round 20, F52: "wrote
// 0 entries", unsaid why). "" when some row is of a current template, or with --all-versions.
std::string other_templates_note(results::Store& s, const std::vector<results::TemplateId>& current) {
  if (current.empty()) return "";
  std::map<std::string, int> other;
  for (const results::TrialRow& t : s.trials()) {
    if (t.status != "ok" || !t.median_ms) continue;
    bool ours = false;
    for (const results::TemplateId& c : current)
      ours = ours || (c.name == t.tmpl.name && c.source_hash == t.tmpl.source_hash);
    if (ours) return "";
    ++other[t.tmpl.name];
  }
  if (other.empty()) return "";
  std::string names;
  int shown = 0, rows = 0;
  for (const auto& [name, count] : other) {
    rows += count;
    if (shown++ < 3) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", core::Error::printable(name.substr(0, 60)), count);
  }
  if (other.size() > 3) names += fmt::format(" and {} more", other.size() - 3);
  return fmt::format(" (its {} timed trials are of templates this mgpu-tune does not build -- {} --: imported "
                     "landscapes, another program's or older versions; this export serves the current templates, "
                     "--all-versions takes older versions of ours, and csv or t4 lists every trial)", rows, names);
}

// A row's performance lints (issue 19): null when nothing was recorded for its kernel, else
// the list, with what it rests on (SASS evidence, a verification's bank-conflict count).
nlohmann::json lints_json(const results::KernelLints& k) {
  if (!k.recorded()) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  for (const core::Lint& l : k.lints) list.push_back({{"code", l.code}, {"message", l.message}});
  return list;
}

nlohmann::json trial_json(const results::TrialRow& t, const std::string& verification, const results::KernelLints& k) {
  return {{"template", t.tmpl.name}, {"source_hash", t.tmpl.source_hash}, {"problem", t.problem.key},
          {"device", t.env.device_name}, {"arch", t.env.arch}, {"source", t.source},
          {"verification", verification}, {"median_ms", *t.median_ms}, {"tflops", results::tflops(t)}, {"noise", t.noise.value_or(0)},
          {"config", nlohmann::json::parse(t.config_json)}, {"run", t.run_id}, {"trial", t.uuid},
          {"lints", lints_json(k)}, {"lints_from", {{"sass", k.sass}, {"verification", k.verified}}}};
}

// Every template this binary builds, with one config of its space: a C++ export declares
// their lookups even when nothing was tuned.
std::vector<results::DeclaredTemplate> declared_templates() {
  std::vector<results::DeclaredTemplate> out;
  for (const core::ArchSpec& arch : core::all_archs()) {
    for (const kernels::OpEntry& e : kernels::ops()) {
      const kernels::OpTemplate* t = nullptr;
      try {
        t = &e.for_arch(arch);
      } catch (const core::Error&) {
        continue;  // the op has no template for this arch
      }
      core::TuningConfig sample;
      const core::ParamSpace space = t->space();  // params() refers into it
      for (const core::Param& p : space.params()) sample.set(p.name, p.domain.front());
      out.push_back({std::string(t->name()), sample.to_json(), problem_record(t->kernel_problems().front()),
                     t->kernel_fields()});
    }
  }
  return out;
}

void add_best(CLI::App& app) {
  struct O {
    std::string db;
    bool json = false, include_model = false, all_versions = false, runs = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("best", "The best verified, measured config per template, problem and device, with "
                                         "its verification (hardware, virtual or none) and its kernel's performance "
                                         "lints as recorded (SASS evidence, bank conflicts counted by a "
                                         "verification); a config the virtual device failed never ranks (the "
                                         "output says how many rows were skipped)");
  cmd->add_option("--db", o->db, "Results database")->required();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--include-model", o->include_model, "Include predicted (model) results, labelled as such");
  cmd->add_flag("--all-versions", o->all_versions, "Include rows of older template versions (stale)");
  cmd->add_flag("--runs", o->runs, "List the database's runs instead");
  cmd->callback(deferring_stops("best had finished; the database was only read", [o] {
    results::Store s = results::Store::open(o->db, results::OpenMode::ReadOnly);
    if (o->runs) {
      if (o->json) {
        // What each run holds: nightly.sh never takes a run that measured nothing as a baseline.
        std::map<std::int64_t, std::array<int, 3>> held;  // run -> trials, measured ok, predicted
        for (const results::TrialRow& t : s.trials()) {
          std::array<int, 3>& h = held[t.run_id];
          ++h[0];
          h[1] += t.status == "ok" && t.source != "model";
          h[2] += t.source == "model";
        }
        nlohmann::json j = nlohmann::json::array();
        for (const results::RunRow& r : s.runs())
          j.push_back({{"id", r.id}, {"uuid", r.uuid}, {"kind", r.kind}, {"arguments", r.arguments},
                       {"started_at", r.started_at}, {"ended_at", r.ended_at}, {"tool_version", r.tool_version},
                       {"trials", held[r.id][0]}, {"measured", held[r.id][1]}, {"predicted", held[r.id][2]}});
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return;
      }
      for (const results::RunRow& r : s.runs())
        fmt::print("run {}  {}  {}  {} .. {}  {}\n", r.id, r.uuid.substr(0, 8), r.kind, r.started_at,
                   r.ended_at.empty() ? "(unfinished)" : r.ended_at, r.arguments);
      return;
    }
    results::VerifiedBest best = results::verified_best(
        s, o->include_model, o->all_versions ? std::vector<results::TemplateId>{} : current_templates());
    const std::string skipped = results::skipped_note(s, best.failed);
    if (o->json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : best.rows) j.push_back(trial_json(r.row, r.verification, results::kernel_lints(s, r.row)));
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      if (!skipped.empty()) fmt::print(stderr, "mgpu-tune: {}\n", skipped);  // stdout stays one JSON document
      return;
    }
    if (best.rows.empty()) {
      // Say which flags would show what the database holds (predictions, imported results,
      // earlier template versions), not a flag that alone shows nothing (round 8, F10).
      auto shows = [&](bool include_model, bool all_versions) {
        return !results::verified_best(s, include_model,
                                       all_versions ? std::vector<results::TemplateId>{} : current_templates())
                    .rows.empty();
      };
      std::string need;
      if (!o->all_versions && shows(o->include_model, true)) need = "--all-versions";
      else if (!o->include_model && shows(true, o->all_versions)) need = "--include-model";
      else if (!o->include_model && !o->all_versions && shows(true, true)) need = "--include-model --all-versions";
      const std::string what = fmt::format("{}results{}", o->include_model ? "" : "measured, verified ",
                                           o->all_versions ? "" : " of the current template versions");
      if (need.empty())
        fmt::print("no {} in {}{}\n", what, o->db, untimed_note(s));
      else
        fmt::print("no {} in {}: {} shows what it holds (predictions, imported results or earlier template "
                   "versions)\n", what, o->db, need);
    } else {
      // With --all-versions a template's versions are told apart (battery round 14, F8): its
      // source hash, and "stale" on every version of one of our templates but the one this
      // binary builds (an imported kernel has no current version to be behind: round 15, F6).
      const std::vector<results::TemplateId> current = current_templates();
      auto version = [&](const results::TemplateId& t) {
        bool ours = false, now = false;
        for (const results::TemplateId& c : current) {
          ours = ours || c.name == t.name;
          now = now || (c.name == t.name && c.source_hash == t.source_hash);
        }
        return fmt::format("{}{} | ", t.source_hash.substr(0, 12), ours && !now ? " (stale)" : "");
      };
      fmt::print("| template | {}problem | device | source | verification | median ms | TFLOP/s | noise | lints | config |\n"
                 "|---|{}---|---|---|---|---:|---:|---:|---|---|\n",
                 o->all_versions ? "version | " : "", o->all_versions ? "---|" : "");
      for (const auto& [r, verification] : best.rows) {
        fmt::print("| {} | {}{} | {} | {} | {} | {:.4f} | {:.1f} | {:.2f}% | {} | `{}` |\n", r.tmpl.name,
                   o->all_versions ? version(r.tmpl) : "", r.problem.key, r.env.device_name, r.source, verification,
                   *r.median_ms, results::tflops(r), 100 * r.noise.value_or(0),
                   results::lints_text(results::kernel_lints(s, r)), r.config_json);
      }
    }
    if (!skipped.empty()) fmt::print("{}\n", skipped);
  }));
}

// The problems of an op's suite (a file or a suite's name, read as `mgpu-tune OP --shapes` reads
// it), as the store keys them.
results::SuiteShapes suite_shapes(const std::string& op, const std::string& spec) {
  results::SuiteShapes suite;
  suite.file = spec;  // an input: the export refuses to write over it
  if (op == "matmul") {  // matmul's suite files (CSV, its columns) are read by its own loader
    ShapeSuite loaded = load_shape_suite(spec, kernels::MatmulProblem{});
    suite.name = loaded.name;
    for (const kernels::MatmulProblem& p : loaded.shapes) suite.shapes.push_back(problem_record(p));
    return suite;
  }
  const kernels::OpEntry* entry = nullptr;
  std::string ops;
  for (const kernels::OpEntry& e : kernels::ops()) {
    ops += (ops.empty() ? "" : ", ") + e.op;
    if (e.op == op) entry = &e;
  }
  if (!entry) throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--op: there is no op '{}' ({})", op.substr(0, 40), ops));
  const kernels::OpTemplate& t = entry->for_arch(core::parse_arch(entry->default_arch));
  const OpProblemSuite loaded = load_op_suite(*entry, t, spec, {});
  suite.name = loaded.name;
  suite.exact_fields = t.kernel_fields();
  for (const kernels::Problem& p : loaded.problems) suite.shapes.push_back(problem_record(p));
  return suite;
}

void add_export(CLI::App& app) {
  struct O {
    std::string db, format, output, shapes, study, op = "matmul";
    bool include_model = false, all_versions = false, json = false, require_verified = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("export", "Export results: JSON per device and template, a C++ header, or CSV. Each "
                                           "entry carries its verification (hardware, virtual or none); a config "
                                           "the virtual device failed is never exported (the output says how many "
                                           "rows were skipped)");
  cmd->add_option("--db", o->db, "Results database")->required();
  cmd->add_option("--format", o->format,
                  "json (a folder), cpp (a header), csv (a file), t4 (a T4 file, .gz to compress) or pack (a folder: "
                  "a C library of the tuned matmul kernels, compiled for each arch, with a C ABI, a CMake package, "
                  "pkg-config and an example; README 'Shipping tuned kernels')")
      ->required()
      ->check(CLI::IsMember({"json", "cpp", "csv", "t4", "pack"}));
  cmd->add_option("--study", o->study, "t4: the study to write, TEMPLATE/PROBLEM/DEVICE (needed when there are several)");
  cmd->add_option("-o,--output", o->output, "Where to write")->required();
  cmd->add_flag("--include-model", o->include_model,
                "Export predicted (model) results too, labelled as such (json, cpp and csv: a T4 file has no way to "
                "label a prediction)");
  cmd->add_flag("--all-versions", o->all_versions, "Include rows of older template versions (stale)");
  cmd->add_flag("--json", o->json, "Print a JSON object describing what was written");
  cmd->add_option("--shapes", o->shapes,
                  "A suite of --op's problems (file or name, as for 'matmul --shapes' or 'attention --shapes'): json "
                  "and cpp exports then say how each of its problems is served (exact, nearest tuned problem, or "
                  "default)");
  std::string ops;
  for (const kernels::OpEntry& e : kernels::ops()) ops += (ops.empty() ? "" : ", ") + e.op;
  cmd->add_option("--op", o->op, fmt::format("The op whose problems --shapes lists: {}", ops))->capture_default_str();
  cmd->add_flag("--require-verified", o->require_verified,
                "Refuse (exit 1, nothing written) when any entry is verified neither on hardware nor on the "
                "virtual device (json, cpp and pack; a pack then holds no default kernels, which no row proved)");
  cmd->callback(deferring_stops("the export had finished (its output is whole); the database was only read", [o] {
    if (o->require_verified && (o->format == "csv" || o->format == "t4"))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("--require-verified goes with --format json, cpp or pack ({} lists every trial, "
                                    "whatever its status or verification)", o->format));
    if (o->format == "pack") {
      if (!o->shapes.empty() || o->all_versions || !o->study.empty() || o->op != "matmul")
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("{} does not go with --format pack (a pack holds the current template "
                                      "versions' matmul kernels, and serves every problem by its own selection)",
                                      !o->shapes.empty() ? "--shapes"
                                      : o->all_versions  ? "--all-versions"
                                      : !o->study.empty() ? "--study"
                                                          : "--op " + o->op.substr(0, 40)));
      results::Store s = results::Store::open(o->db, results::OpenMode::ReadOnly);
      const PackSummary p = export_pack(s, o->output, o->include_model, current_templates(), o->require_verified,
                                        core::CompileCache::default_dir().string());
      std::vector<results::TrialRow> failed;
      s.best(o->include_model, current_templates(), &failed);
      const std::string skipped = results::skipped_note(s, failed);
      if (o->json) {
        nlohmann::json summary{{"db", o->db}, {"format", "pack"}, {"output", o->output}, {"entries", p.entries},
                               {"defaults", p.defaults}, {"kernels", p.kernels}, {"archs", p.archs},
                               {"left_out", p.left_out}, {"include_model", o->include_model},
                               {"require_verified", o->require_verified}, {"skipped_failed_verification", failed.size()}};
        std::cout << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return;
      }
      fmt::print("wrote a kernel pack to {}: {} tuned entries and {} defaults, {} kernels, for {}\n", o->output,
                 p.entries, p.defaults, p.kernels, fmt::join(p.archs, " and "));
      if (p.left_out > 0)
        fmt::print("{} rows of other ops or kernels left out (a pack holds matmul kernels this mgpu-tune builds)\n",
                   p.left_out);
      if (!skipped.empty()) fmt::print("{}\n", skipped);
      // Quoted for a shell where the path needs it (a folder name with a space: round 17, F13). The
      // build folder is beside the pack, not in it: a re-export replaces the pack's folder whole.
      std::string dir = o->output;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      if (dir.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+") != std::string::npos) {
        std::string q = "'";
        for (char c : dir) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        dir = q + "'";
      }
      const std::string build = dir.back() == '\'' ? dir.substr(0, dir.size() - 1) + "-build'" : dir + "-build";
      fmt::print("build it: cmake -S {0} -B {1} && cmake --build {1} (README 'Shipping tuned kernels')\n", dir, build);
      return;
    }
    if (o->include_model && o->format == "t4")
      throw core::Error(core::ErrorKind::InvalidInput,
                        "--include-model goes with --format json, cpp or csv: a T4 file holds measurements and has no "
                        "way to label a prediction (its readers would take it for one)");
    if (!o->study.empty() && o->format != "t4")
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("--study goes with --format t4 (a {} export holds every study)", o->format));
    results::SuiteShapes suite;
    if (!o->shapes.empty()) {
      if (o->format == "csv" || o->format == "t4")
        throw core::Error(core::ErrorKind::InvalidInput, "--shapes goes with --format json or cpp");
      suite = suite_shapes(o->op, o->shapes);
    } else if (o->op != "matmul") {
      throw core::Error(core::ErrorKind::InvalidInput, "--op names the op of a --shapes suite: give --shapes too");
    }
    results::Store s = results::Store::open(o->db, results::OpenMode::ReadOnly);
    auto current = o->all_versions ? std::vector<results::TemplateId>{} : current_templates();
    std::string skipped;
    size_t skipped_rows = 0;
    std::vector<std::string> files{o->output};
    std::string t4_note;
    int n = o->format == "json"
                ? results::export_json(s, o->output, o->include_model, current, suite, &files, o->require_verified)
            : o->format == "cpp" ? results::export_cpp(s, o->output, o->include_model, current, suite,
                                                       declared_templates(), o->require_verified)
            : o->format == "t4"  ? results::export_t4(s, o->output, o->study, &t4_note)
                                 : results::export_csv(s, o->output, o->include_model);
    if (o->format == "json" || o->format == "cpp") {
      std::vector<results::TrialRow> failed;
      s.best(o->include_model, current, &failed);
      skipped = results::skipped_note(s, failed);
      skipped_rows = failed.size();
    }
    nlohmann::json summary{{"db", o->db}, {"format", o->format}, {"output", o->output}, {"files", files},
                           {o->format == "csv" || o->format == "t4" ? "trials" : "entries", n},
                           {"include_model", o->include_model}, {"require_verified", o->require_verified},
                           {"skipped_failed_verification", skipped_rows}};
    if (!skipped.empty()) summary["skipped_note"] = skipped;
    if (!o->json)
      fmt::print("wrote {} {} to {}{}\n", n, o->format == "csv" || o->format == "t4" ? "trials" : "entries", o->output,
                 n == 0 ? untimed_note(s, o->include_model) +
                              (o->format == "json" || o->format == "cpp" ? other_templates_note(s, current) : "")
                        : "");
    if (!o->json && !skipped.empty()) fmt::print("{}\n", skipped);
    if (!t4_note.empty()) {
      summary["t4_note"] = t4_note;
      if (!o->json) fmt::print("{}\n", t4_note);
    }
    if (!suite.shapes.empty()) {
      std::map<std::string, std::vector<results::TrialRow>> groups;  // per template and arch
      // A suite is of one op's problems: it says nothing of another op's entries.
      // Served as each output serves it: a json file per device, the C++ header per arch.
      for (results::TrialRow& t : s.best(o->include_model, current))
        if (t.problem.kernel == suite.shapes.front().kernel)
          groups[fmt::format("{} on {}", t.tmpl.name, o->format == "json" ? t.env.device_name : t.env.arch)]
              .push_back(std::move(t));
      if (groups.empty()) {  // said, not silent: every problem of the suite is served by nothing
        const std::string op = suite.shapes.front().kernel;
        summary["coverage"].push_back({{"suite", suite.name}, {"shapes", suite.shapes.size()}, {"served", ""},
                                       {"exact", 0}, {"nearest", 0}, {"default", 0}, {"none", suite.shapes.size()}});
        if (!o->json)
          fmt::print("suite {} ({} shapes): no {} entry was exported{}, so none is served (the header's lookup "
                     "returns nullptr)\n",
                     suite.name, suite.shapes.size(), op, o->include_model ? "" : " (predictions need --include-model)");
      }
      for (auto& [name, rows] : groups) {
        std::map<std::string, int> how;
        for (const results::Coverage& c : results::coverage(suite, rows)) ++how[c.how];
        summary["coverage"].push_back({{"suite", suite.name}, {"shapes", suite.shapes.size()}, {"served", name},
                                       {"exact", how["exact"]}, {"nearest", how["nearest"]}, {"default", how["default"]},
                                       {"none", how["none"]}});
        // "none": the lookup returns nullptr (no tuned problem of the kernel fields, e.g. a head dim).
        if (!o->json)
          fmt::print("suite {} ({} shapes), {}: {} exact, {} nearest, {}\n", suite.name, suite.shapes.size(), name,
                     how["exact"], how["nearest"],
                     suite.exact_fields.empty() ? fmt::format("{} default", how["default"])
                                                : fmt::format("{} none (nullptr)", how["none"]));
      }
    }
    if (o->json) std::cout << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }));
}

void add_merge(CLI::App& app) {
  struct O {
    std::vector<std::string> inputs;
    std::string output;
    bool json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("merge", "Combine results databases without duplicating trials");
  cmd->add_option("inputs", o->inputs,
                 "Databases to merge (read only; a blank one, left by a run killed before it wrote its schema, "
                 "holds nothing and is skipped with a note)")->required()->expected(1, -1);
  cmd->add_option("-o,--output", o->output, "The merged database (created or extended)")->required();
  cmd->add_flag("--json", o->json, "Print a JSON object describing what was written");
  cmd->callback([o] {
    install_stop_handlers();
    std::vector<std::string> blank;
    // A stop is heeded between trials (round 19, F34: the first Ctrl-C was silent for the whole
    // merge, and a second left a half-merged new output beside a 4 MB -wal).
    results::MergeStop stop{[] { return stop_requested().load(); }};
    int added = results::merge_databases(o->inputs, o->output, &blank, &stop);
    if (stop.stopped)
      exit_if_stopped(stop.output_removed
                          ? fmt::format("the merge was not finished, and the new database {} it had begun was removed; the "
                                        "inputs were only read", o->output)
                          : fmt::format("the merge was not finished: {} of the inputs' {} trials were added to {} and "
                                        "are committed (merging again adds the rest: trials are keyed by their "
                                        "uuids); the inputs were only read", added, stop.trials_total, o->output));
    if (o->json)
      std::cout << nlohmann::json{{"inputs", o->inputs}, {"output", o->output}, {"trials_added", added},
                                  {"blank_inputs", blank}}
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    else
      fmt::print("merged {} databases into {}: {} trials added\n", o->inputs.size() - blank.size(), o->output, added);
    for (const std::string& b : blank)
      fmt::print(stderr, "mgpu-tune: skipped {}: it is blank (a run that created it stopped before it wrote the "
                         "schema), so it holds no results\n", b);
    exit_if_stopped("the merge had finished and is committed; the inputs were only read");
  });
}

void add_regress(CLI::App& app) {
  struct O {
    std::string db, baseline, candidate;
    double threshold_pct = 2.0, max_noise_pct = 5.0;
    bool json = false, fail_on_unstable = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("regress",
                                 "Compare two runs: SAME / FASTER / SLOWER / UNSTABLE per config (exit 1 if slower). "
                                 "Comparisons of cost-model predictions are labelled PREDICTED and are no verdict: "
                                 "never a pass, never a regression (exit 3 when they are all the runs share)");
  cmd->add_option("--db", o->db, "Results database")->required();
  cmd->add_option("--baseline", o->baseline, "Baseline run (id or uuid prefix; see 'best --runs')")->required();
  cmd->add_option("--candidate", o->candidate, "Candidate run")->required();
  cmd->add_option("--threshold", o->threshold_pct, "Smallest change that counts, in percent")
      ->capture_default_str()
      ->check(finite_number(0, 100, /*min_open=*/true));
  cmd->add_option("--max-noise", o->max_noise_pct, "Noisier than this (percent) is UNSTABLE")
      ->capture_default_str()
      ->check(finite_number(0, 100));
  cmd->add_flag("--json", o->json, "Print JSON instead of markdown");
  cmd->add_flag("--fail-on-unstable", o->fail_on_unstable,
                "Exit 4 when nothing got slower but some comparison was too noisy to judge, or the runs share "
                "no config (no verdict is not a pass)");
  cmd->callback(deferring_stops("the comparison had finished; the database was only read", [o] {
    results::Store s = results::Store::open(o->db, results::OpenMode::ReadOnly);
    results::RunRow b = s.run(o->baseline), c = s.run(o->candidate);
    // A run against itself is every config against itself: allowed (the no-change baseline of a
    // check), but said, so a script's wrong pick does not read as a real comparison.
    if (b.id == c.id)
      fmt::print(stderr, "note: --baseline {} and --candidate {} are the same run ({}): each config is compared with "
                         "itself\n", o->baseline, o->candidate, b.uuid);
    results::RegressReport r = results::compare_runs(s, b.id, c.id, o->threshold_pct / 100, o->max_noise_pct / 100);
    // Two runs with no config in common: a comparison of nothing, which printed as a clean pass
    // ("0 slower, 0 faster, 0 same", exit 0). Bad input: the runs given cannot be compared.
    // (--fail-on-unstable, nightly.sh's form, keeps its documented "no verdict", exit 4, below.)
    if (r.rows.empty() && !o->fail_on_unstable) {
      auto timed_configs = [&](std::int64_t run) {
        std::set<std::tuple<std::string, std::string, std::string, std::string>> keys;
        for (const results::TrialRow& t : s.trials(run))
          if (t.status == "ok" && t.median_ms) keys.emplace(t.tmpl.name, t.problem.key, t.env.device_name, t.config_json);
        return keys.size();
      };
      const std::size_t in_base = timed_configs(b.id), in_candidate = timed_configs(c.id);
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("nothing to compare: runs {} and {} have no config in common (regress compares "
                                    "a template's config at one problem on one device, timed in both runs; the "
                                    "baseline has {} such config{}, the candidate {}): give two runs of the same "
                                    "problems and device",
                                    b.id, c.id, in_base, in_base == 1 ? "" : "s", in_candidate));
    }
    if (o->json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& x : r.rows)
        rows.push_back({{"verdict", results::to_string(x.verdict)}, {"template", x.template_name},
                        {"problem", x.problem_key}, {"device", x.device}, {"config", nlohmann::json::parse(x.config_json)},
                        {"baseline_ms", x.base_ms}, {"candidate_ms", x.candidate_ms}, {"change", x.change},
                        {"tolerance", x.tolerance}, {"predicted", x.predicted}, {"both_predicted", x.both_predicted}});
      nlohmann::json winners = nlohmann::json::array();
      for (const auto& w : r.winner_changes)
        winners.push_back({{"template", w.template_name}, {"problem", w.problem_key}, {"device", w.device},
                           {"baseline", nlohmann::json::parse(w.base_config)},
                           {"candidate", nlohmann::json::parse(w.candidate_config)}});
      std::cout << nlohmann::json{{"baseline", b.uuid}, {"candidate", c.uuid}, {"slower", r.slower},
                                  {"faster", r.faster}, {"same", r.same}, {"unstable", r.unstable},
                                  {"predicted", r.predicted}, {"both_predicted", r.both_predicted},
                                  {"rows", rows}, {"winner_changes", winners}}
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    } else {
      std::cout << results::to_markdown(r);
    }
    // Predictions (source model) are no measurement: never a pass, never a regression (README).
    const std::string sides = r.both_predicted == r.predicted   ? "both runs predicted"
                              : r.both_predicted == 0           ? "one run predicted, the other measured"
                                                                : fmt::format("both runs predicted in {}, one in {}",
                                                                              r.both_predicted, r.predicted - r.both_predicted);
    if (r.predicted > 0 && r.measured() > 0)
      fmt::print(stderr, "mgpu-tune: note: {} of the {} comparisons are of cost-model predictions ({}): no verdict "
                         "for them; the verdict is the {} measured ones'\n",
                 r.predicted, r.rows.size(), sides, r.measured());
    if (r.slower > 0)
      throw core::Error(core::ErrorKind::WrongResult, fmt::format("{} configs got slower", r.slower));
    if (r.predicted > 0 && r.measured() == 0) {
      fmt::print(stderr, "mgpu-tune: no verdict: all {} comparisons are of cost-model predictions ({}): nothing was "
                         "measured, and predictions are never a pass\n",
                 r.predicted, sides);
      throw ExitWith{kExitNothingMeasured};
    }
    if (o->fail_on_unstable && (r.unstable > 0 || r.rows.empty())) {
      fmt::print(stderr, "mgpu-tune: no verdict: {}\n",
                 r.rows.empty() ? "the runs share no measured config" : fmt::format("{} comparisons too noisy", r.unstable));
      throw ExitWith{kExitNoVerdict};
    }
  }));
}

}  // namespace

void add_results_commands(CLI::App& app) {
  add_best(app);
  add_export(app);
  add_merge(app);
  add_regress(app);
  add_trials_command(app);
}

}  // namespace mgpu::harness
