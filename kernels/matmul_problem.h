// The matmul problem a template is tuned for: C[M,N] = A[M,K] . B, with B stored either K x N
// row-major ("kn") or N x K row-major ("nk", i.e. B transposed), bf16/f16 inputs, f32
// accumulation, bf16/f16/f32 output. Contract: validate() throws Error{InvalidInput} naming the
// offending field; key() is a stable text form used in databases and exports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mgpu::kernels {

enum class DType { BF16, F16, F32 };
enum class BLayout { KN, NK };

std::string_view to_string(DType t);
std::string_view to_string(BLayout l);
DType parse_dtype(std::string_view text);      // "bf16" | "f16" | "f32"
BLayout parse_b_layout(std::string_view text);  // "kn" | "nk"
int size_in_bytes(DType t);

struct MatmulProblem {
  std::int64_t m = 4096;
  std::int64_t n = 4096;
  std::int64_t k = 4096;
  DType in_dtype = DType::BF16;
  DType out_dtype = DType::BF16;
  BLayout b_layout = BLayout::KN;

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Fewest bytes moved through device memory: each input read once, the output written once.
  double min_bytes() const;
  std::string key() const;  // e.g. "m4096_n4096_k4096_bf16_bf16_kn"
};

void validate(const MatmulProblem& p);

// A matmul problem from its key, as key() writes it ("m4096_n4096_k4096_bf16_bf16_kn").
// Throws Error{InvalidInput}: a text of another form says what a key reads like; a size, dtype
// or layout out of range says which.
MatmulProblem parse_matmul_key(std::string_view key);

}  // namespace mgpu::kernels
