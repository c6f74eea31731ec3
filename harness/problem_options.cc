#include "harness/problem_options.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "harness/numeric_options.h"

namespace mgpu::harness {

void ArchOption::add(CLI::App& cmd) {
  cmd.add_option("--arch", text,
                 fmt::format("Target GPU architecture: {} (short forms mean the 'a' targets)",
                             core::arch_choices()))
      ->required();
}

const core::ArchSpec& ArchOption::resolve() const { return core::parse_arch(text); }

void MatmulProblemOptions::add(CLI::App& cmd) {
  // The sizes' range as kernels::validate() states it, checked on the text so that a message
  // shows what was typed ("" or 99999999999999999999), not what CLI11 made of it.
  const CLI::Validator size = whole_number(1, std::numeric_limits<std::int32_t>::max());
  cmd.add_option("--m", problem.m, "Rows of A and C")->check(size)->capture_default_str();
  cmd.add_option("--n", problem.n, "Columns of B and C")->check(size)->capture_default_str();
  cmd.add_option("--k", problem.k, "Reduction dimension")->check(size)->capture_default_str();
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
