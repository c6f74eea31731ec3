#include "harness/problem_options.h"

#include <fmt/format.h>

namespace mgpu::harness {

void ArchOption::add(CLI::App& cmd) {
  cmd.add_option("--arch", text,
                 fmt::format("Target GPU architecture: {} (short forms mean the 'a' targets)",
                             core::arch_choices()))
      ->required();
}

const core::ArchSpec& ArchOption::resolve() const { return core::parse_arch(text); }

void MatmulProblemOptions::add(CLI::App& cmd) {
  cmd.add_option("--m", problem.m, "Rows of A and C")->capture_default_str();
  cmd.add_option("--n", problem.n, "Columns of B and C")->capture_default_str();
  cmd.add_option("--k", problem.k, "Reduction dimension")->capture_default_str();
  cmd.add_option("--dtype", dtype, "Input dtype: bf16 or f16")->capture_default_str();
  cmd.add_option("--out-dtype", out_dtype, "Output dtype: bf16, f16 or f32 (default: --dtype)");
  cmd.add_option("--layout", layout,
                 "Layout of B: kn (K x N row-major) or nk (N x K row-major, i.e. transposed)")
      ->capture_default_str();
}

kernels::MatmulProblem MatmulProblemOptions::resolve() const {
  kernels::MatmulProblem p = problem;
  p.in_dtype = kernels::parse_dtype(dtype);
  p.out_dtype = out_dtype.empty() ? p.in_dtype : kernels::parse_dtype(out_dtype);
  p.b_layout = kernels::parse_b_layout(layout);
  kernels::validate(p);
  return p;
}

}  // namespace mgpu::harness
