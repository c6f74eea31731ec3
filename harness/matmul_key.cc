#include "harness/matmul_key.h"

#include <regex>

#include "core/error.h"

namespace mgpu::harness {

kernels::MatmulProblem matmul_problem_from_key(const std::string& key) {
  static const std::regex form(R"(m(\d{1,10})_n(\d{1,10})_k(\d{1,10})_([a-z0-9]+)_([a-z0-9]+)_([a-z]+))");
  std::smatch m;
  if (!std::regex_match(key, m, form))
    throw core::Error(core::ErrorKind::InvalidInput, "a problem key reads like m4096_n4096_k4096_bf16_bf16_kn");
  kernels::MatmulProblem p;
  p.m = std::stoll(m[1]);
  p.n = std::stoll(m[2]);
  p.k = std::stoll(m[3]);
  p.in_dtype = kernels::parse_dtype(m[4].str());
  p.out_dtype = kernels::parse_dtype(m[5].str());
  p.b_layout = kernels::parse_b_layout(m[6].str());
  kernels::validate(p);
  return p;
}

}  // namespace mgpu::harness
