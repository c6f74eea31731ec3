#include "results/stored_config.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"

namespace mgpu::results {
namespace {

TemplateConfigCheck& template_check() {
  static TemplateConfigCheck check;
  return check;
}

// The stored text as a message quotes it: one line, at most 80 bytes, control bytes as '?'.
std::string quoted(const std::string& text) {
  std::string s = text.substr(0, 80);
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return text.size() > 80 ? s + "..." : s;
}

ProblemRowCheck& problem_check() {
  static ProblemRowCheck check;
  return check;
}

}  // namespace

void set_problem_row_check(ProblemRowCheck check) { problem_check() = std::move(check); }

std::optional<std::string> why_problem_row_wrong(const ProblemRecord& problem) {
  return problem_check() ? problem_check()(problem) : std::nullopt;
}

void check_problem_row(const std::string& db, std::int64_t trial_id, const ProblemRecord& problem) {
  if (std::optional<std::string> why = why_problem_row_wrong(problem))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has a problem row of {} that is not its key's problem: {}", db,
                                  trial_id, quoted(problem.kernel), *why));
}

void set_template_config_check(TemplateConfigCheck check) { template_check() = std::move(check); }

core::TuningConfig stored_config_text(const std::string& db, std::int64_t trial_id, const std::string& config_json) {
  return stored_config(db, trial_id, TemplateId{}, nullptr, config_json);
}

core::TuningConfig stored_config(const std::string& db, std::int64_t trial_id, const TemplateId& tmpl,
                                 const ProblemRecord* problem, const std::string& config_json) {
  nlohmann::json j = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has an unreadable config ({})", db, trial_id,
                                  quoted(config_json)));
  // A stored number is read by value, as a problem row's fields are: 64.0 is 64 (a --config typed
  // by hand is held to integers, with a message that says so).
  bool by_value = false;
  for (auto& [k, v] : j.items())
    if (v.is_number_float() && core::whole_number(v.get<double>())) {
      v = *core::whole_number(v.get<double>());
      by_value = true;
    }
  core::TuningConfig c;
  try {
    if (by_value) (void)core::parse_user_json(config_json, "config");  // a key given twice stays damage
    c = core::TuningConfig::from_json(by_value ? j.dump() : config_json);  // ints and strings only, each within int64
  } catch (const core::Error& e) {
    if (e.kind() != core::ErrorKind::InvalidInput) throw;
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has an unreadable config ({}): {}", db, trial_id,
                                  quoted(config_json), e.what()));
  }
  try {
    if (template_check() && !tmpl.name.empty()) {
      ProblemRecord unknown;
      unknown.kernel.clear();  // no problem to judge the config at
      template_check()(tmpl, problem ? *problem : unknown, c);
    }
  } catch (const core::Error& e) {
    if (e.kind() != core::ErrorKind::InvalidInput) throw;
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has a config its template {} does not accept ({}): {}", db,
                                  trial_id, tmpl.name, quoted(config_json), e.what()));
  }
  return c;
}

}  // namespace mgpu::results
