#include "kernels/matmul_problem.h"

#include <limits>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels {

using core::Error;
using core::ErrorKind;

std::string_view to_string(DType t) {
  switch (t) {
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    case DType::F32: return "f32";
  }
  return "?";
}

std::string_view to_string(BLayout l) { return l == BLayout::KN ? "kn" : "nk"; }

DType parse_dtype(std::string_view text) {
  if (text == "bf16") return DType::BF16;
  if (text == "f16") return DType::F16;
  if (text == "f32") return DType::F32;
  throw Error(ErrorKind::InvalidInput, fmt::format("unknown dtype '{}': choose bf16, f16 or f32", text));
}

BLayout parse_b_layout(std::string_view text) {
  if (text == "kn") return BLayout::KN;
  if (text == "nk") return BLayout::NK;
  throw Error(ErrorKind::InvalidInput,
              fmt::format("unknown B layout '{}': choose kn (B is K x N row-major) or nk (B is "
                          "N x K row-major)",
                          text));
}

int size_in_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

double MatmulProblem::min_bytes() const {
  double in = size_in_bytes(in_dtype), out = size_in_bytes(out_dtype);
  return in * (double(m) * double(k) + double(k) * double(n)) + out * double(m) * double(n);
}

std::string MatmulProblem::key() const {
  return fmt::format("m{}_n{}_k{}_{}_{}_{}", m, n, k, to_string(in_dtype), to_string(out_dtype),
                     to_string(b_layout));
}

void validate(const MatmulProblem& p) {
  // TMA strides are 32-bit element counts, and global dims must be < 2^32.
  constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
  for (auto [name, v] : {std::pair{"m", p.m}, {"n", p.n}, {"k", p.k}}) {
    if (v < 1 || v > kMaxDim)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("--{} must be between 1 and {}, got {}", name, kMaxDim, v));
  }
  if (p.in_dtype == DType::F32)
    throw Error(ErrorKind::InvalidInput,
                "input dtype f32 is not supported: the tensor-core matmul takes bf16 or f16 inputs");
}

MatmulProblem parse_matmul_key(std::string_view key) {
  static const std::regex form(R"(m(\d{1,10})_n(\d{1,10})_k(\d{1,10})_([a-z0-9]+)_([a-z0-9]+)_([a-z]+))");
  const std::string text(key);
  std::smatch m;
  if (!std::regex_match(text, m, form))
    throw Error(ErrorKind::InvalidInput, "a problem key reads like m4096_n4096_k4096_bf16_bf16_kn");
  MatmulProblem p;
  p.m = std::stoll(m[1]);
  p.n = std::stoll(m[2]);
  p.k = std::stoll(m[3]);
  p.in_dtype = parse_dtype(m[4].str());
  p.out_dtype = parse_dtype(m[5].str());
  p.b_layout = parse_b_layout(m[6].str());
  validate(p);
  return p;
}

}  // namespace mgpu::kernels
