#include "harness/config_option.h"

#include <cstdio>
#include <functional>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::harness {

namespace {

core::TuningConfig fill_in(std::string_view op, const core::TuningConfig& defaults,
                           const std::function<void(const core::TuningConfig&)>& check, const std::string& json) {
  core::TuningConfig given = core::TuningConfig::from_json(json);
  std::string names;
  for (const auto& [name, value] : defaults.values()) names += (names.empty() ? "" : ", ") + name;
  for (const auto& [name, value] : given.values())
    if (!defaults.has(name))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("unknown {} config parameter '{}' (the parameters: {})", op, name, names));
  core::TuningConfig full = given;
  std::string filled;
  for (const auto& [name, value] : defaults.values())
    if (!given.has(name)) {
      full.set(name, value);
      filled += fmt::format("{}{}={}", filled.empty() ? "" : ", ", name, core::to_string(value));
    }
  check(full);  // value types and ranges
  if (!filled.empty()) fmt::print(stderr, "note: --config leaves out fields: the template's defaults are used: {}\n", filled);
  return full;
}

}  // namespace

core::TuningConfig config_from_user(const kernels::MatmulTemplate& t, const std::string& json) {
  return fill_in("matmul", t.default_config(), [&](const core::TuningConfig& c) { t.check_config(c); }, json);
}

core::TuningConfig config_from_user(const kernels::OpTemplate& t, const std::string& json) {
  return fill_in(t.op(), t.default_config(), [&](const core::TuningConfig& c) { t.check_config(c); }, json);
}

}  // namespace mgpu::harness
