#include "kernels/op_template.h"

#include <charconv>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels {

void OpTemplate::require_valid(const Problem& p, const core::TuningConfig& c) const {
  check_config(c);
  if (auto r = why_invalid(p, c))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
}

std::int64_t flag_integer(const std::map<std::string, std::string>& values, const std::string& flag, std::int64_t min,
                          std::int64_t max) {
  auto it = values.find(flag);
  if (it == values.end())
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--{} is missing", flag));
  const std::string& text = it->second;
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  // Decimal digits only: no sign, no spaces, no hex, nothing after the number.
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || ptr != end || v < min || v > max)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--{} must be a whole number from {} to {}, got '{}'", flag, min, max, text));
  return v;
}

std::string flag_choice(const std::map<std::string, std::string>& values, const std::string& flag,
                        const std::vector<std::string>& choices) {
  auto it = values.find(flag);
  if (it == values.end())
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("--{} is missing", flag));
  for (const std::string& c : choices)
    if (it->second == c) return c;
  throw core::Error(core::ErrorKind::InvalidInput,
                    fmt::format("--{} must be one of {}, got '{}'", flag, fmt::join(choices, ", "), it->second));
}

bool flag_switch(const std::map<std::string, std::string>& values, const std::string& flag) {
  auto it = values.find(flag);
  return it != values.end() && it->second == "true";
}

}  // namespace mgpu::kernels
