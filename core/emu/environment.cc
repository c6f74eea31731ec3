#include "core/emu/environment.h"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/emu/exec/state.h"

namespace mgpu::emu {
namespace {

// The variable's value, or nullptr when it is unset or empty.
const char* value_of(const char* name) {
  const char* s = std::getenv(name);
  return s && *s ? s : nullptr;
}

[[noreturn]] void refuse(const char* name, std::string_view text, const char* takes) {
  throw std::invalid_argument(std::string(name) + "='" + std::string(text.substr(0, 40)) + (text.size() > 40 ? "...'" : "'") +
                              ": " + takes);
}

std::uint64_t whole_number(const char* name, std::uint64_t fallback, std::uint64_t min, const char* takes) {
  const char* s = value_of(name);
  if (!s) return fallback;
  const std::string_view text(s);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min) refuse(name, text, takes);
  return v;
}

}  // namespace

std::uint64_t seed_from_environment() {
  return whole_number("MGPU_EMU_SEED", 1, 0, "must be a whole number from 0 to 18446744073709551615");
}

bool races_from_environment() {
  const char* s = value_of("MGPU_EMU_RACES");
  if (!s || std::string_view(s) == "0") return false;
  if (std::string_view(s) == "1") return true;
  refuse("MGPU_EMU_RACES", s, "must be 1 (detect data races) or 0");
}

bool print_reports_from_environment() {
  const char* s = value_of("MGPU_EMU_REPORTS");
  if (!s || std::string_view(s) == "stderr") return true;
  if (std::string_view(s) == "off") return false;
  refuse("MGPU_EMU_REPORTS", s, "must be stderr or off");
}

std::uint64_t step_limit_from_environment() {
  return whole_number("MGPU_EMU_STEP_LIMIT", kDefaultStepLimit, 1, "must be a whole number of warp-instructions, at least 1");
}

std::uint64_t default_step_limit() { return kDefaultStepLimit; }

void check_environment() {
  seed_from_environment();
  races_from_environment();
  print_reports_from_environment();
  step_limit_from_environment();
}

}  // namespace mgpu::emu
