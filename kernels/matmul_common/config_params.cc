#include "kernels/matmul_common/config_params.h"

#include <algorithm>
#include <limits>
#include <variant>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels {

using core::Error;
using core::ErrorKind;

std::string_view to_string(Dim d) { return d == Dim::M ? "M" : "N"; }

void check_param_names(const core::TuningConfig& t, std::initializer_list<const char*> names,
                       std::initializer_list<const char*> added_later) {
  // Names and value types are checked here; ranges are the validity rules' business, so a
  // config outside the default space (say tile_n 96) can still be tried and explained.
  // Called for every config a search walks (millions): map lookups only, the message built
  // only for a config that fails.
  auto all = [&] {
    std::string a;
    for (const char* n : names) a += (a.empty() ? "" : ", ") + std::string(n);
    for (const char* n : added_later) a += (a.empty() ? "" : ", ") + std::string(n);
    return a;
  };
  // An unknown name first: a config of another template is told by its first foreign name.
  size_t known = 0;
  for (const char* n : names) known += t.has(n);
  for (const char* n : added_later) known += t.has(n);
  if (known != t.values().size())
    for (const auto& [k, v] : t.values()) {
      auto is = [&](const char* n) { return k == n; };
      if (std::none_of(names.begin(), names.end(), is) && std::none_of(added_later.begin(), added_later.end(), is))
        throw Error(ErrorKind::InvalidInput, fmt::format("unknown matmul config parameter '{}' (the parameters: {})", k, all()));
    }
  for (const char* n : names)
    if (!t.has(n))
      throw Error(ErrorKind::InvalidInput, fmt::format("the config lacks '{}' (a matmul config sets all of: {})", n, all()));
}

int int_value(std::string_view name, const core::ParamValue& value) {
  if (!std::holds_alternative<std::int64_t>(value))
    throw Error(ErrorKind::InvalidInput, fmt::format("config has no integer '{}'", name));
  // The configs' fields are ints: a larger value must not wrap into a small (even valid) one.
  const std::int64_t v = std::get<std::int64_t>(value);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw Error(ErrorKind::InvalidInput, fmt::format("{} = {} is out of range", name, v));
  return static_cast<int>(v);
}

const std::string& str_value(std::string_view name, const core::ParamValue& value) {
  if (!std::holds_alternative<std::string>(value))
    throw Error(ErrorKind::InvalidInput, fmt::format("config has no text value '{}'", name));
  return std::get<std::string>(value);
}

Dim dim_value(std::string_view name, const core::ParamValue& value) {
  const std::string& s = str_value(name, value);
  if (s == "M") return Dim::M;
  if (s == "N") return Dim::N;
  throw Error(ErrorKind::InvalidInput, fmt::format("{} must be \"M\" or \"N\", got \"{}\"", name, s));
}

}  // namespace mgpu::kernels
