// Options shared by the commands that take a target and a matmul problem:
// --arch and --m --n --k --dtype --out-dtype --layout. Contract: add_*() registers the options
// on a subcommand; resolve() turns what was parsed into validated values and throws
// core::Error{InvalidInput} (exit 2) naming the bad option and the valid choices.
#pragma once

#include <string>

#include <CLI/App.hpp>

#include "core/arch.h"
#include "kernels/matmul_problem.h"

namespace mgpu::harness {

struct ArchOption {
  std::string text;
  void add(CLI::App& cmd);
  const core::ArchSpec& resolve() const;
};

struct MatmulProblemOptions {
  kernels::MatmulProblem problem;  // defaults: 4096^3 bf16 -> bf16, B as K x N
  std::string dtype = "bf16";
  std::string out_dtype;  // empty: same as --dtype
  std::string layout = "kn";
  void add(CLI::App& cmd);
  kernels::MatmulProblem resolve() const;
};

}  // namespace mgpu::harness
