#include "harness/numeric_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace mgpu::harness {
namespace {

constexpr std::int64_t kLowest = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kHighest = std::numeric_limits<std::int64_t>::max();

std::string range_text(std::int64_t min, std::int64_t max) {
  // The upper end is said too: 2^63 and beyond are refused, and "at least 0" alone would not
  // say why (round 6, V16).
  if (max == kHighest && min != kLowest) return fmt::format("at least {} (at most {})", min, max);
  return fmt::format("between {} and {}", min, max);
}

}  // namespace

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  std::string want = fmt::format("a whole number {}", range_text(min, max));
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        const char* s = text.c_str();
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s, &end, 10);
        bool digits = !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
        if (!digits || end == s || *end != '\0' || errno == ERANGE || v < min || v > max)
          return fmt::format("must be {}, got '{}'", want, text);
        // CLI11 converts with base 0 ("010" would be 8): give it the number as read here.
        text = std::to_string(v);
        return "";
      },
      want, kWholeNumberCheck);
}

CLI::Validator finite_number(double min, double max, bool min_open) {
  const bool unbounded = max == std::numeric_limits<double>::max();
  std::string want = min_open    ? fmt::format("a finite number greater than {}{}", min, unbounded ? "" : fmt::format(" and at most {}", max))
                     : unbounded ? fmt::format("a finite number of at least {}", min)
                                 : fmt::format("a finite number between {} and {}", min, max);
  return CLI::Validator(
      [min, max, min_open, want](std::string& text) -> std::string {
        const char* s = text.c_str();
        char* end = nullptr;
        errno = 0;
        double v = std::strtod(s, &end);
        // strtod reads "nan", "inf" and hex floats: only plain decimal text is a number here.
        bool plain = !text.empty() && text.find_first_not_of("+-0123456789.eE") == std::string::npos;
        // ERANGE is overflow (caught as not finite) or underflow: 4.9e-324 is a finite number,
        // read as the nearest double (a denormal, or 0).
        bool overflow = errno == ERANGE && std::abs(v) > std::numeric_limits<double>::min();
        if (!plain || end == s || *end != '\0' || overflow || !std::isfinite(v) || v < min || (min_open && v == min) || v > max)
          return fmt::format("must be {}, got '{}'", want, text);
        return "";
      },
      want, kFiniteNumberCheck);
}

}  // namespace mgpu::harness
