// Checks for numeric command-line options, attached with CLI11's ->check(). Contract: each
// validator accepts only the plain decimal text of a finite number in its range (whole numbers
// for counts) and otherwise fails the parse with "must be ..., got 'TEXT'" (exit 2), TEXT being
// what the user typed (an empty value or 99999999999999999999 included). CLI11's own Range lets
// NaN through, unsigned options silently wrap "-1", and its integer conversion takes "" as 0,
// saturates what is out of range and reads "010" as octal, hence these. whole_number() hands
// CLI11 the number in canonical decimal ("010" is 10, "+7" is 7) where it may change the text:
// ->check() stops it, and check_every_option() (option_checks.h) lets it again.
#pragma once

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace mgpu::harness {

// The validators' names, for CLI::Option::get_validator(): an option holding one needs no other
// number check (see option_checks.h).
inline constexpr const char* kWholeNumberCheck = "whole number";
inline constexpr const char* kFiniteNumberCheck = "finite number";

// A whole number in [min, max].
CLI::Validator whole_number(std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max());
// A finite real number in [min, max] (or (min, max] when min_open).
CLI::Validator finite_number(double min, double max = std::numeric_limits<double>::max(), bool min_open = false);

}  // namespace mgpu::harness
