#include "results/t4_store.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <variant>
#include <filesystem>
#include <map>

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include "core/error.h"
#include "results/output_file.h"
#include "results/stored_config.h"
#include "results/t4_format.h"

namespace mgpu::results {
namespace {

std::string status_of(const T4Result& r) {
  if (r.valid()) return "ok";
  if (r.invalidity == "compile") return "compile_error";
  if (r.invalidity == "runtime") return "launch_error";
  if (r.invalidity == "correct") return "wrong_result";  // ran, but its output was wrong
  return "invalid_config";
}

// A wrong result is a run whose output failed the check: invalidity "correct" with correctness 0,
// which status_of() reads back as one (it was written "runtime" and came back as a launch error:
// battery round 16, F5). T4 has no word for the other run-time failures (a timeout, a launch
// error, a bad environment): they are "runtime", and the export says how many it so relabels.
std::string invalidity_of(const TrialRow& t) {
  if (t.status == "ok" || t.status == "wrong_result") return "correct";
  if (t.status == "compile_error") return "compile";
  if (t.status == "invalid_config") return "constraints";
  return "runtime";
}

}  // namespace

void check_t4_import(const T4Import& as) {
  if (as.kernel.empty() || as.problem.empty() || as.device.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "import --t4 needs a kernel, a problem and a device name");
  // A kernel is a template name: exports make file names and C++ identifiers of it (one with
  // "../" was written outside the export's folder: battery round 14, F1).
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; };
  if (as.kernel.size() > 64 || !std::all_of(as.kernel.begin(), as.kernel.end(), name_char) ||
      !std::isalnum(static_cast<unsigned char>(as.kernel.front())))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("the kernel name '{}' is not a template name: up to 64 letters, digits, '_', '-' "
                                  "or '.', starting with a letter or digit (give one with --kernel)",
                                  as.kernel.substr(0, 80)));
  // The problem and device are printed in tables and reports: text of one line, printable, and
  // short (round 19, F45: a newline in --problem broke every Markdown table).
  for (const auto& [flag, text] : {std::pair{"--problem", &as.problem}, std::pair{"--device", &as.device}}) {
    constexpr std::size_t kMax = 200;
    const bool printable = std::all_of(text->begin(), text->end(), [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
    if (!printable || text->size() > kMax)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{} must be one line of at most {} printable characters (no control characters such "
                                    "as a newline or tab), got {} characters", flag, kMax, text->size()));
  }
}

void check_t4_results(const T4File& file, const std::string& path) {
  for (size_t i = 0; i < file.results.size(); ++i) {
    const T4Result& r = file.results[i];
    std::string where = path.empty() ? fmt::format("T4 result {}", i) : fmt::format("T4 file {}, result {}", path, i);
    // The reader keeps a number it cannot hold as int64 as the text of a double: a value past
    // int64 would change type (2^70 -> "1.1805916207174113e+21") and no longer be the config.
    for (const auto& [name, value] : r.config.values()) {
      const auto* text = std::get_if<std::string>(&value);
      if (!text || text->empty()) continue;
      char* end = nullptr;
      double d = std::strtod(text->c_str(), &end);
      if (*end == '\0' && std::isfinite(d) && d == std::floor(d) && std::abs(d) >= 0x1p63)
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("{}: parameter {} is {}, an integer beyond the 64-bit range (a config "
                                      "value must fit an int64)", where, name, *text));
    }
    if (!r.valid()) continue;
    // A stored time is positive (the store refuses to read any other): a 0 is no measurement.
    bool zero = r.objective_ms() && *r.objective_ms() <= 0;
    for (double x : r.runtimes_ms) zero = zero || x <= 0;
    if (zero)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: a valid result with a time of 0 (a measured time is positive)", where));
  }
}

T4Imported import_t4(Store& store, const std::string& path, const T4Import& as) {
  T4File file = read_t4(path);  // all of it first: a bad file writes nothing
  check_t4_results(file, path);
  return import_t4(store, file, as);
}

T4Imported import_t4(Store& store, const T4File& file, const T4Import& as) {
  check_t4_import(as);
  check_t4_results(file, "");
  T4Imported done;
  const TemplateId tmpl{as.kernel, "t4", "t4"};
  Environment env;
  env.device_name = as.device;
  env.arch = as.arch;
  guard_database(store.path(), [&] {
    // All or nothing: a stop or failure half-way leaves no partial import to be duplicated by
    // the next attempt; and one commit instead of one per result is what makes it fast.
    SQLite::Transaction tx(store.db(), SQLite::TransactionBehavior::IMMEDIATE);
    std::set<std::string> there = store.measured_configs(tmpl, as.problem, env, "imported");
    std::optional<std::int64_t> run;
    for (const T4Result& r : file.results) {
      if (as.stop && as.stop->load()) throw T4ImportStopped{};  // the transaction rolls back
      std::string config = r.config.to_json();
      if (!there.insert(config).second) {
        ++done.already_there;
        continue;
      }
      if (!run) run = store.begin_run("tune", as.arguments, as.tool_version);
      ++done.written;
      TrialRecord t;
      t.run_id = *run;
      t.tmpl = tmpl;
      if (as.shape) t.problem = *as.shape;
      else t.problem.kernel = as.kernel;
      t.problem.key = as.problem;
      t.config_json = std::move(config);
      t.env = env;
      t.status = status_of(r);
      t.source = "imported";
      t.compile_ms = r.compile_ms;
      if (r.valid()) {
        t.median_ms = r.objective_ms();
        t.samples_ms = r.runtimes_ms;
        if (!r.runtimes_ms.empty()) {
          t.min_ms = *std::min_element(r.runtimes_ms.begin(), r.runtimes_ms.end());
          double sum = 0;
          for (double x : r.runtimes_ms) sum += x;
          t.mean_ms = sum / r.runtimes_ms.size();
        }
      } else {
        t.message = fmt::format("T4 invalidity: {}", r.invalidity);
      }
      store.record_trial(t);
    }
    if (run) store.end_run(*run);
    tx.commit();
  });
  return done;
}

int export_t4(Store& store, const std::string& path, const std::string& study, std::string* note) {
  refuse_database_path(path, {store.path()});
  std::map<std::string, std::map<std::string, TrialRow>> studies;  // study -> config -> latest trial
  std::set<std::string> predicted;                                 // studies of predictions
  int untimed = 0, predictions = 0;
  for (TrialRow& t : store.trials()) {
    std::string key = fmt::format("{}/{}/{}", t.tmpl.name, t.problem.key, t.env.device_name);
    // T4 has no place to say a time is predicted: its readers (and our import) would take a
    // prediction for a measurement. Predictions are exported by json and csv, which label them.
    if (t.source == "model") {
      ++predictions;
      predicted.insert(std::move(key));
      continue;
    }
    if (t.status == "env_error") continue;  // the machine's fault, not the config's
    // A T4 study is a landscape of times: virtual-device verifications (no clock) and an ok row
    // without a time hold none, and are no study of their own.
    if (t.source == "emulate" || (t.status == "ok" && !t.median_ms && t.samples_ms.empty())) {
      ++untimed;
      continue;
    }
    // An ok row's config whole (stored_config.h): a T4 reader is told every parameter.
    if (t.status == "ok") t.config_json = stored_config(store.path(), t).to_json();
    studies[key][t.config_json] = std::move(t);  // oldest first: the latest wins
  }
  const std::string no_predictions = "a T4 file holds measurements and has no way to label a prediction (its "
                                     "readers would take it for one): export predictions with --format json or csv";
  if (!study.empty()) {
    auto it = studies.find(study);
    if (it == studies.end())
      throw core::Error(core::ErrorKind::InvalidInput,
                        predicted.count(study)
                            ? fmt::format("study '{}' of {} holds cost-model predictions: {}", study, store.path(),
                                          no_predictions)
                            : fmt::format("{} has no trials of study '{}'", store.path(), study));
    studies = {{it->first, std::move(it->second)}};
  }
  if (studies.size() != 1) {
    std::string names;
    for (const auto& [k, v] : studies) names += fmt::format("{}'{}' ({} configs)", names.empty() ? "" : ", ", k, v.size());
    std::vector<std::string> why;
    if (predictions) why.push_back(fmt::format("{} predictions, which T4 cannot label: export them with --format json or csv",
                                               predictions));
    if (untimed) why.push_back(fmt::format("{} virtual-device verifications, which hold no times", untimed));
    std::string whys;
    for (const std::string& w : why) whys += (whys.empty() ? " (" : "; ") + w;
    if (!whys.empty()) whys += ")";
    throw core::Error(core::ErrorKind::InvalidInput,
                      studies.empty() ? fmt::format("{} has no trials to export{}", store.path(), whys)
                                      : fmt::format("a T4 file holds one study and {} has {}: {}; pick one with --study",
                                                    store.path(), studies.size(), names));
  }
  T4File file;
  std::map<std::string, int> relabelled;  // status -> trials T4 holds only as "runtime" failures
  for (const auto& [config, t] : studies.begin()->second) {
    T4Result r;
    r.config = core::TuningConfig::from_json(config);
    r.invalidity = invalidity_of(t);
    r.correct = t.status == "ok";
    if (r.invalidity == "runtime" && t.status != "launch_error") ++relabelled[t.status];
    r.runtimes_ms = t.samples_ms;
    if (t.status == "ok" && r.runtimes_ms.empty() && t.median_ms) r.runtimes_ms = {*t.median_ms};
    r.compile_ms = t.compile_ms.value_or(0);
    r.timestamp = t.created_at;
    file.results.push_back(std::move(r));
  }
  write_t4(file, path);
  if (note && !relabelled.empty()) {
    std::string list;
    for (const auto& [status, n] : relabelled) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, status);
    *note = fmt::format("T4 has no word for {}: written as runtime failures (import reads them back as launch_error)", list);
  }
  return static_cast<int>(file.results.size());
}

}  // namespace mgpu::results
