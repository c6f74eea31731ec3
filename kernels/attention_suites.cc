#include "kernels/op_suites.h"

#include <cstdint>
#include <string>

namespace mgpu::kernels {
namespace {

std::map<std::string, std::string> row(std::int64_t batch, std::int64_t heads, std::int64_t kv_heads, std::int64_t seq,
                                       std::int64_t head_dim, bool causal) {
  std::map<std::string, std::string> r{{"batch", std::to_string(batch)},       {"heads", std::to_string(heads)},
                                       {"kv-heads", std::to_string(kv_heads)}, {"seq-q", std::to_string(seq)},
                                       {"seq-kv", std::to_string(seq)},        {"head-dim", std::to_string(head_dim)}};
  if (causal) r["causal"] = "true";
  return r;
}

}  // namespace

std::vector<OpSuite> attention_suites() {
  std::vector<OpSuite> out;
  // FlashAttention-2 (Dao 2023, section 4.1) and -3 (Shah et al. 2024, section 4.1) benchmark the
  // forward pass at 16k tokens per batch (batch = 16384 / seq), hidden size 2048 (heads = 2048 /
  // head dim), with and without the causal mask.
  OpSuite fa3{"fa3", "FlashAttention-3's forward benchmark: 16k tokens, hidden 2048, head dim 64/128/256, seq 512..16k, "
                     "causal and not (36 problems)", {}};
  for (std::int64_t d : {64, 128, 256})
    for (bool causal : {false, true})
      for (std::int64_t seq : {512, 1024, 2048, 4096, 8192, 16384})
        fa3.rows.push_back(row(16384 / seq, 2048 / d, 2048 / d, seq, d, causal));
  out.push_back(std::move(fa3));
  // Llama 3 8B's attention (32 query heads, 8 K/V heads, head dim 128) at prefill lengths.
  OpSuite llama{"llama3-8b-prefill", "Llama 3 8B's attention layer at prefill (h32, GQA kvh8, d128, causal), batch 1, "
                                     "seq 1k..8k (4 problems)", {}};
  for (std::int64_t seq : {1024, 2048, 4096, 8192}) llama.rows.push_back(row(1, 32, 8, seq, 128, true));
  out.push_back(std::move(llama));
  return out;
}

}  // namespace mgpu::kernels
