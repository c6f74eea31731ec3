#include "harness/finite_range.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace mgpu::harness {

CLI::Validator finite_range(double lo, double hi, bool lo_open) {
  std::string range = fmt::format("{} {} and at most {}", lo_open ? "greater than" : "at least", lo, hi);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end) return fmt::format("'{}' is not a number", text);
        if (!std::isfinite(v) || (lo_open ? v <= lo : v < lo) || v > hi)
          return fmt::format("must be a finite number {}, not '{}'", range, text);
        return "";
      },
      "NUMBER " + range, "FINITE_RANGE");
}

}  // namespace mgpu::harness
