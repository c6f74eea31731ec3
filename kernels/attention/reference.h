// Float64 CPU reference for the FlashAttention forward problem, plus the per-element scales the
// tolerance (tolerance.h) is expressed in.
//
// Layout, as Pallas:MGPU's FlashAttention-3 kernel takes it (jax-ml/jax
// jax/experimental/pallas/ops/gpu/attention_mgpu.py, _attention_forward: "batch_size, q_seq_len,
// num_q_heads, head_dim = q.shape", "_, kv_seq_len, num_kv_heads, _ = k.shape", out shaped like q,
// and the residual LSE shaped (batch_size, num_q_heads, q_seq_len) with the sequence minor-most
// for 1D TMA): row-major Q and O [batch, seq_q, heads, head_dim], K and V [batch, seq_kv,
// kv_heads, head_dim], LSE [batch, heads, seq_q]. FlashAttention's flash_attn_func uses the same
// (batch, seqlen, nheads, headdim). Note that attention_mgpu.py stores its LSE in base 2
// (m_i + log2(l_i)) and applies no softmax scale; ours is in natural log with an explicit scale,
// so a caller converts (multiply a base-2 LSE by ln 2) before comparing.
//
// Contract: inputs are the dtype's raw 16-bit words and must be finite; softmax is computed in
// float64 with the row max subtracted; causal masking and empty rows follow attention_problem.h
// (O = 0, LSE = -inf). Cost is O(pairs * head_dim) with no allocation per element: seq 512 x
// head_dim 128 x 4 heads takes about 0.3 s on one busy core.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/attention/attention_problem.h"

namespace mgpu::kernels::attention {

inline std::int64_t q_index(const AttentionProblem& p, std::int64_t b, std::int64_t i,
                            std::int64_t h, std::int64_t d) {
  return ((b * p.seq_q + i) * p.heads + h) * p.head_dim + d;  // also O's
}
inline std::int64_t kv_index(const AttentionProblem& p, std::int64_t b, std::int64_t j,
                             std::int64_t kvh, std::int64_t d) {
  return ((b * p.seq_kv + j) * p.kv_heads + kvh) * p.head_dim + d;
}
inline std::int64_t lse_index(const AttentionProblem& p, std::int64_t b, std::int64_t h,
                              std::int64_t i) {
  return (b * p.heads + h) * p.seq_q + i;  // also the per-row vectors below
}

double default_softmax_scale(const AttentionProblem& p);  // 1 / sqrt(head_dim)

struct AttentionReference {
  double softmax_scale = 0;
  std::vector<double> out;                 // O, Q's layout
  std::vector<std::uint16_t> out_rounded;  // O rounded to the problem's dtype (nearest even)
  std::vector<double> lse;                 // natural log, LSE layout; -inf for a row with no key
  // sum_j P_ij |V_jd| (Q's layout): the element's value scale. |O_id| never exceeds it, and every
  // rounding in a kernel's P and P.V perturbs O_id by a multiple of it (tolerance.h).
  std::vector<double> abs_out;
  // LSE layout: max |V_jd| over the row's unmasked keys and all d (0 for an empty row), and
  // max_j scale * sum_d |Q_id K_jd| over them (bounds |S_ij| and the float32 error of S_ij).
  std::vector<double> row_value_max;
  std::vector<double> row_score_abs;
};

// Throws Error{InvalidInput} for an invalid problem, spans of the wrong size or a non-finite scale.
AttentionReference reference_attention(const AttentionProblem& p, std::span<const std::uint16_t> q,
                                       std::span<const std::uint16_t> k,
                                       std::span<const std::uint16_t> v,
                                       std::optional<double> softmax_scale = std::nullopt);

// The dtype's value of a raw 16-bit word, and the nearest-even word of a value.
double decode(DType t, std::uint16_t word);
std::uint16_t encode(DType t, double value);

}  // namespace mgpu::kernels::attention
