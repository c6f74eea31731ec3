#include "kernels/attention/attention_problem.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels::attention {

using core::Error;
using core::ErrorKind;

namespace {

// Each dimension ends up in a TMA descriptor (dims < 2^32, 32-bit strides) like matmul's.
constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
// Byte counts (element count x 4 for the float32 LSE) must stay int64.
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int64_t>::max() / 4;

constexpr std::string_view kKeyShape =
    "b<batch>_h<heads>_kvh<kv_heads>_sq<seq_q>_skv<seq_kv>_d<head_dim>_<bf16|f16>_<causal|noncausal>";

void check_elements(std::string_view what, std::string_view product,
                    std::initializer_list<std::int64_t> factors) {
  std::int64_t n = 1;
  for (std::int64_t f : factors) {
    if (__builtin_mul_overflow(n, f, &n) || n > kMaxElements)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("attention {} has too many elements: {} must be at most {}", what,
                              product, kMaxElements));
  }
}

[[noreturn]] void bad_key(std::string_view key, std::string_view why) {
  throw Error(ErrorKind::InvalidInput,
              fmt::format("bad attention key '{}': {} (expected {})", key, why, kKeyShape));
}

// A decimal without sign or leading zeros, so that every value has exactly one spelling.
std::int64_t parse_field(std::string_view key, std::string_view token, std::string_view prefix) {
  if (token.substr(0, prefix.size()) != prefix)
    bad_key(key, fmt::format("field '{}' should start with '{}'", token, prefix));
  std::string_view digits = token.substr(prefix.size());
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || digits[0] < '0' || digits[0] > '9' || ec != std::errc() ||
      end != digits.data() + digits.size() || (digits.size() > 1 && digits[0] == '0'))
    bad_key(key, fmt::format("field '{}' needs a plain decimal after '{}'", token, prefix));
  return v;
}

}  // namespace

std::int64_t AttentionProblem::visible_keys(std::int64_t query) const {
  if (!causal) return seq_kv;
  return std::clamp<std::int64_t>(query + seq_kv - seq_q + 1, 0, seq_kv);
}

std::int64_t AttentionProblem::unmasked_pairs_per_head() const {
  if (!causal) return seq_q * seq_kv;
  // Rows seq_q - a .. seq_q - 1 (a = min(seq_q, seq_kv)) see seq_kv - a + 1 .. seq_kv keys; the
  // rows above them see none.
  std::int64_t a = std::min(seq_q, seq_kv);
  return a * seq_kv - a * (a - 1) / 2;
}

double AttentionProblem::flops() const {
  return 4.0 * double(head_dim) * double(batch) * double(heads) * double(unmasked_pairs_per_head());
}

double AttentionProblem::min_bytes() const {
  double e = size_in_bytes(dtype);
  return e * (2.0 * double(q_elements()) + 2.0 * double(kv_elements())) + 4.0 * double(lse_elements());
}

std::string AttentionProblem::key() const {
  return fmt::format("b{}_h{}_kvh{}_sq{}_skv{}_d{}_{}_{}", batch, heads, kv_heads, seq_q, seq_kv,
                     head_dim, to_string(dtype), causal ? "causal" : "noncausal");
}

void validate(const AttentionProblem& p) {
  for (auto [name, v] : {std::pair{"batch", p.batch}, {"heads", p.heads}, {"kv_heads", p.kv_heads},
                         {"seq_q", p.seq_q}, {"seq_kv", p.seq_kv}}) {
    if (v < 1 || v > kMaxDim)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("attention {} must be between 1 and {}, got {}", name, kMaxDim, v));
  }
  if (p.heads % p.kv_heads != 0)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("attention heads must be a multiple of kv_heads (each KV head serves "
                            "heads / kv_heads query heads), got heads {} and kv_heads {}",
                            p.heads, p.kv_heads));
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("attention head_dim must be 64, 128 or 256, got {}", p.head_dim));
  if (p.dtype != DType::BF16 && p.dtype != DType::F16)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("attention dtype must be bf16 or f16 (Q, K, V and O share it), got {}",
                            to_string(p.dtype)));
  check_elements("Q/O", "batch * seq_q * heads * head_dim", {p.batch, p.seq_q, p.heads, p.head_dim});
  check_elements("K/V", "batch * seq_kv * kv_heads * head_dim",
                 {p.batch, p.seq_kv, p.kv_heads, p.head_dim});
  check_elements("LSE", "batch * heads * seq_q", {p.batch, p.heads, p.seq_q});
}

AttentionProblem parse_attention_key(std::string_view key) {
  std::vector<std::string_view> tokens;
  for (std::size_t start = 0;;) {
    std::size_t end = key.find('_', start);
    tokens.push_back(key.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (tokens.size() != 8) bad_key(key, fmt::format("{} fields instead of 8", tokens.size()));
  AttentionProblem p;
  p.batch = parse_field(key, tokens[0], "b");
  p.heads = parse_field(key, tokens[1], "h");
  p.kv_heads = parse_field(key, tokens[2], "kvh");
  p.seq_q = parse_field(key, tokens[3], "sq");
  p.seq_kv = parse_field(key, tokens[4], "skv");
  p.head_dim = parse_field(key, tokens[5], "d");
  if (tokens[6] == "bf16")
    p.dtype = DType::BF16;
  else if (tokens[6] == "f16")
    p.dtype = DType::F16;
  else
    bad_key(key, fmt::format("dtype '{}' is not bf16 or f16", tokens[6]));
  if (tokens[7] == "causal")
    p.causal = true;
  else if (tokens[7] == "noncausal")
    p.causal = false;
  else
    bad_key(key, fmt::format("mask '{}' is not causal or noncausal", tokens[7]));
  validate(p);
  return p;
}

}  // namespace mgpu::kernels::attention
