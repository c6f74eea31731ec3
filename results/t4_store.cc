#include "results/t4_store.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "results/output_file.h"
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

std::string invalidity_of(const TrialRow& t) {
  if (t.status == "ok") return "correct";
  if (t.status == "compile_error") return "compile";
  if (t.status == "invalid_config") return "constraints";
  return "runtime";
}

}  // namespace

void check_t4_import(const T4Import& as) {
  if (as.kernel.empty() || as.problem.empty() || as.device.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "import --t4 needs a kernel, a problem and a device name");
}

int import_t4(Store& store, const std::string& path, const T4Import& as) {
  return import_t4(store, read_t4(path), as);  // all of it first: a bad file writes nothing
}

int import_t4(Store& store, const T4File& file, const T4Import& as) {
  check_t4_import(as);
  std::int64_t run = store.begin_run("tune", as.arguments, as.tool_version);
  for (const T4Result& r : file.results) {
    TrialRecord t;
    t.run_id = run;
    t.tmpl = {as.kernel, "t4", "t4"};
    t.problem.kernel = as.kernel;
    t.problem.key = as.problem;
    t.config_json = r.config.to_json();
    t.env.device_name = as.device;
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
  store.end_run(run);
  return static_cast<int>(file.results.size());
}

int export_t4(Store& store, const std::string& path, bool include_model, const std::string& study) {
  refuse_database_path(path, {store.path()});
  std::map<std::string, std::map<std::string, TrialRow>> studies;  // study -> config -> latest trial
  for (TrialRow& t : store.trials()) {
    if (t.source == "model" && !include_model) continue;
    if (t.status == "env_error") continue;  // the machine's fault, not the config's
    std::string key = fmt::format("{}/{}/{}", t.tmpl.name, t.problem.key, t.env.device_name);
    studies[key][t.config_json] = std::move(t);  // oldest first: the latest wins
  }
  if (!study.empty()) {
    auto it = studies.find(study);
    if (it == studies.end())
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("{} has no trials of study '{}'", store.path(), study));
    studies = {{it->first, std::move(it->second)}};
  }
  if (studies.size() != 1) {
    std::string names;
    for (const auto& [k, v] : studies) names += fmt::format("{}'{}' ({} configs)", names.empty() ? "" : ", ", k, v.size());
    throw core::Error(core::ErrorKind::InvalidInput,
                      studies.empty() ? fmt::format("{} has no trials to export", store.path())
                                      : fmt::format("a T4 file holds one study and {} has {}: {}; pick one with --study",
                                                    store.path(), studies.size(), names));
  }
  T4File file;
  for (const auto& [config, t] : studies.begin()->second) {
    T4Result r;
    r.config = core::TuningConfig::from_json(config);
    r.invalidity = invalidity_of(t);
    r.correct = t.status == "ok";
    r.runtimes_ms = t.samples_ms;
    if (t.status == "ok" && r.runtimes_ms.empty() && t.median_ms) r.runtimes_ms = {*t.median_ms};
    r.compile_ms = t.compile_ms.value_or(0);
    r.timestamp = t.created_at;
    file.results.push_back(std::move(r));
  }
  write_t4(file, path);
  return static_cast<int>(file.results.size());
}

}  // namespace mgpu::results
