// A CLI11 check for a numeric option: a finite number within a range. CLI11's own Range lets
// "nan" through (every comparison with NaN is false) and says nothing of infinity; this one
// refuses both, so the option's value is bad input (exit 2) with a message naming the range.
#pragma once

#include <CLI/CLI.hpp>

namespace mgpu::harness {

// lo < x <= hi when lo_open, else lo <= x <= hi.
CLI::Validator finite_range(double lo, double hi, bool lo_open = false);

}  // namespace mgpu::harness
