#include "harness/measure/measurement.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace mgpu::harness {

namespace {
constexpr std::pair<TrialStatus, std::string_view> kNames[] = {
    {TrialStatus::Ok, "ok"},           {TrialStatus::CompileError, "compile_error"},
    {TrialStatus::LaunchError, "launch_error"}, {TrialStatus::Fault, "fault"},
    {TrialStatus::Timeout, "timeout"}, {TrialStatus::WrongResult, "wrong_result"},
    {TrialStatus::InvalidConfig, "invalid_config"},
    {TrialStatus::EnvError, "env_error"}, {TrialStatus::Hazard, "hazard"},
    {TrialStatus::Deadlock, "deadlock"}, {TrialStatus::Unsupported, "unsupported"}};
}  // namespace

std::string_view to_string(TrialStatus s) {
  for (auto [v, n] : kNames)
    if (v == s) return n;
  return "?";
}

TrialStatus parse_trial_status(std::string_view s) {
  for (auto [v, n] : kNames)
    if (n == s) return v;
  throw core::Error(core::ErrorKind::InvalidInput, fmt::format("unknown trial status '{}'", s));
}

void to_json(nlohmann::json& j, const Measurement& m) {
  j = {{"status", to_string(m.status)}, {"source", m.source}, {"message", m.message},
       {"samples_ms", m.samples_ms}, {"median_ms", m.median_ms}, {"min_ms", m.min_ms}, {"mean_ms", m.mean_ms},
       {"noise", m.noise}, {"noise_converged", m.noise_converged},
       {"sm_clock_mhz_before", m.sm_clock_mhz_before}, {"sm_clock_mhz_after", m.sm_clock_mhz_after},
       {"throttled", m.throttled},
       {"timer", m.timer}, {"kernel_hash", m.kernel_hash}};
  j["verification_error"] = m.verification_error ? nlohmann::json(*m.verification_error) : nlohmann::json(nullptr);
}

void from_json(const nlohmann::json& j, Measurement& m) {
  m.status = parse_trial_status(j.at("status").get<std::string>());
  m.source = j.at("source").get<std::string>();
  m.message = j.value("message", "");
  m.samples_ms = j.value("samples_ms", std::vector<double>{});
  m.median_ms = j.value("median_ms", 0.0);
  m.min_ms = j.value("min_ms", 0.0);
  m.mean_ms = j.value("mean_ms", 0.0);
  m.noise = j.value("noise", 0.0);
  m.noise_converged = j.value("noise_converged", false);
  m.sm_clock_mhz_before = j.value("sm_clock_mhz_before", 0.0);
  m.sm_clock_mhz_after = j.value("sm_clock_mhz_after", 0.0);
  m.throttled = j.value("throttled", false);
  m.timer = j.value("timer", "");
  m.kernel_hash = j.value("kernel_hash", "");
  if (j.contains("verification_error") && !j["verification_error"].is_null())
    m.verification_error = j["verification_error"].get<double>();
}

}  // namespace mgpu::harness
