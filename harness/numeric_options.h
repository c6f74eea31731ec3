// Checks for numeric command-line options, attached with CLI11's ->check(). Contract: each
// validator accepts only the plain decimal text of a finite number in its range (whole numbers
// for counts) and otherwise fails the parse with "must be ..., got 'TEXT'" (exit 2). CLI11's
// own Range lets NaN through and unsigned options silently wrap "-1", hence these.
#pragma once

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace mgpu::harness {

// A whole number in [min, max].
CLI::Validator whole_number(std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max());
// A finite real number in [min, max] (or (min, max] when min_open).
CLI::Validator finite_number(double min, double max = std::numeric_limits<double>::max(), bool min_open = false);

}  // namespace mgpu::harness
