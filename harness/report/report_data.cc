#include "harness/report/report_data.h"

#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

#include "harness/current_templates.h"
#include "harness/report/verification_summary.h"
#include "harness/version.h"
#include "results/kernel_lints.h"
#include "results/store.h"
#include "results/stored_config.h"
#include "results/verified_best.h"

namespace mgpu::harness {

std::string report_data_json(const std::string& db_path) {
  results::Store store = results::Store::open(db_path, results::OpenMode::ReadOnly);
  nlohmann::json runs = nlohmann::json::array();
  for (const results::RunRow& r : store.runs())
    runs.push_back({{"id", r.id}, {"uuid", r.uuid}, {"kind", r.kind}, {"started_at", r.started_at},
                    {"arguments", r.arguments}});
  nlohmann::json trials = nlohmann::json::array();
  for (const results::TrialRow& t : store.trials()) {
    bool timed = t.status == "ok" && t.median_ms;
    trials.push_back({{"id", t.id}, {"run", t.run_id}, {"template", t.tmpl.name}, {"problem", t.problem.key},
                      {"device", t.env.device_name}, {"source", t.source}, {"status", t.status},
                      {"config", nlohmann::json::parse(results::stored_config_text(db_path, t.id, t.config_json).to_json())},
                      {"ms", timed ? nlohmann::json(*t.median_ms) : nlohmann::json()},
                      {"noise", t.noise.value_or(0)}, {"tflops", timed ? results::tflops(t) : 0.0}});
  }
  nlohmann::json exported = nlohmann::json::array();
  results::VerifiedBest best = results::verified_best(store, /*include_model=*/true, current_templates());
  for (const auto& [t, verification] : best.rows) {
    // Issue 19: the kernel's performance lints as recorded (short text, and each with its evidence).
    results::KernelLints k = results::kernel_lints(store, t);
    nlohmann::json lint_list = nlohmann::json::array();
    for (const core::Lint& l : k.lints) lint_list.push_back({{"code", l.code}, {"message", l.message}});
    exported.push_back({{"template", t.tmpl.name}, {"problem", t.problem.key}, {"device", t.env.device_name},
                        {"source", t.source}, {"verification", verification},
                        {"config", nlohmann::json::parse(t.config_json)},
                        {"ms", t.median_ms.value_or(0)}, {"tflops", results::tflops(t)},
                        {"lints", results::lints_text(k)}, {"lint_list", lint_list}});
  }
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return nlohmann::json{{"db", db_path}, {"generated", stamp}, {"tool", version_string()}, {"runs", runs},
                        {"trials", trials}, {"exported", exported},
                        {"skipped_failed_verification", results::skipped_note(store, best.failed)},
                        {"verification", verification_summary(store)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mgpu::harness
