// Shape suites: the matmul problems a model runs, and how near two problems are. Contract:
// named_suite() knows the suites in named_suites() (else Error{InvalidInput} listing them);
// their shapes use B as N x K ("nk": a PyTorch Linear weight) and the given dtypes.
// shape_distance() is |ln M1/M2| + |ln N1/N2| + |ln K1/K2| -- the log of the product of the
// three size ratios, the same nearness the exported C++ lookup uses -- and is infinite across
// different dtypes or B layouts (their configs do not transfer).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/matmul_problem.h"

namespace mgpu::kernels {

struct NamedSuite {
  std::string name;
  std::string description;
};

std::vector<NamedSuite> named_suites();
// The suite's shapes for in/out dtypes (defaults bf16 -> bf16).
std::vector<MatmulProblem> named_suite(std::string_view name, DType in = DType::BF16, DType out = DType::BF16);

double shape_distance(const MatmulProblem& a, const MatmulProblem& b);

}  // namespace mgpu::kernels
