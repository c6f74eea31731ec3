#include "harness/config_option.h"

#include <cstdio>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::harness {

core::TuningConfig config_from_user(const kernels::MatmulTemplate& t, const std::string& json) {
  core::TuningConfig given = core::TuningConfig::from_json(json);
  core::TuningConfig defaults = t.default_config();
  std::string names;
  for (const auto& [name, value] : defaults.values()) names += (names.empty() ? "" : ", ") + name;
  for (const auto& [name, value] : given.values())
    if (!defaults.has(name))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("unknown matmul config parameter '{}' (the parameters: {})", name, names));
  core::TuningConfig full = given;
  std::string filled;
  for (const auto& [name, value] : defaults.values())
    if (!given.has(name)) {
      full.set(name, value);
      filled += fmt::format("{}{}={}", filled.empty() ? "" : ", ", name, core::to_string(value));
    }
  t.check_config(full);  // value types and ranges
  if (!filled.empty()) fmt::print(stderr, "note: --config leaves out fields: the template's defaults are used: {}\n", filled);
  return full;
}

}  // namespace mgpu::harness
