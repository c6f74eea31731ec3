// The FlashAttention forward problem a template is tuned for: O = softmax(scale * Q.K^T + mask).V
// per (batch, query head), with grouped-query attention (query head h reads KV head
// h / (heads / kv_heads), as FlashAttention and Pallas:MGPU's attention_mgpu.py do), bf16/f16
// Q, K, V and O, float32 log-sum-exp per query row. Contract: validate() throws
// Error{InvalidInput} naming the offending field and its allowed range; key() is a stable text
// form for databases and exports, and parse_attention_key(p.key()) == p for every valid p.
//
// Causal alignment (seq_q != seq_kv): bottom-right, as FlashAttention 2.1+ defines it
// (Dao-AILab/flash-attention README, "2.1: Change behavior of causal flag": "If seqlen_q !=
// seqlen_k and causal=True, the causal mask is aligned to the bottom right corner of the
// attention matrix"): query i attends keys j <= i + seq_kv - seq_q. It makes decoding with a KV
// cache (seq_q < seq_kv) the same kernel as prefill. (attention_mgpu.py masks j <= i, top-left;
// the two agree only when seq_q == seq_kv, so a kernel modelled on it adds seq_kv - seq_q.)
// With seq_q > seq_kv the first seq_q - seq_kv rows see no key; such a row is defined as
// FlashAttention-3 defines it (hopper/softmax.h, Softmax::finalize: a zero row sum gives
// inv_sum 0 and LSE -INFINITY): O = 0 and LSE = -inf. (FlashAttention-2's non-split path writes
// LSE = +inf instead; we follow FA3, whose Hopper kernels are the ones ours imitate.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/matmul_problem.h"  // DType

namespace mgpu::kernels::attention {

struct AttentionProblem {
  std::int64_t batch = 1;
  std::int64_t heads = 32;     // query heads
  std::int64_t kv_heads = 32;  // K/V heads; heads % kv_heads == 0 (GQA; MQA when 1)
  std::int64_t seq_q = 4096;
  std::int64_t seq_kv = 4096;
  std::int64_t head_dim = 128;  // 64, 128 or 256
  DType dtype = DType::BF16;    // of Q, K, V and O
  bool causal = false;

  std::int64_t group_size() const { return heads / kv_heads; }  // query heads per KV head
  std::int64_t kv_head_of(std::int64_t head) const { return head / group_size(); }
  // Keys query row i sees: a prefix [0, visible_keys(i)) of the KV sequence, possibly empty.
  std::int64_t visible_keys(std::int64_t query) const;
  // Unmasked (query, key) pairs of one (batch, head); fits int64 for any valid problem.
  std::int64_t unmasked_pairs_per_head() const;

  std::int64_t q_elements() const { return batch * seq_q * heads * head_dim; }  // also O's
  std::int64_t kv_elements() const { return batch * seq_kv * kv_heads * head_dim; }  // each of K, V
  std::int64_t lse_elements() const { return batch * heads * seq_q; }

  // Multiply-adds actually done, counted as 2 flops each: head_dim for S = Q.K^T and head_dim
  // for O = P.V per unmasked pair, i.e. 4 * head_dim * pairs. Masked pairs count nothing, so a
  // causal problem's figure is not the dense one halved.
  double flops() const;
  // Q, K, V read once, O written once, plus the float32 LSE. Every key is visible to the last
  // query row, so no mask makes a K/V row unnecessary.
  double min_bytes() const;
  // "b1_h32_kvh8_sq4096_skv4096_d128_bf16_causal" (mask field: causal | noncausal).
  std::string key() const;

  bool operator==(const AttentionProblem&) const = default;
};

void validate(const AttentionProblem& p);

// The inverse of key(): throws Error{InvalidInput} on anything key() would not produce
// (wrong field order or prefix, signs, leading zeros, trailing text) or on an invalid problem.
AttentionProblem parse_attention_key(std::string_view key);

}  // namespace mgpu::kernels::attention
