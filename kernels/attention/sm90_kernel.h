// The FlashAttention-3-style forward kernel for sm_90a, built through the MGPU primitives.
// One CTA computes 128 query rows of one (batch, head): warpgroup 0 is the producer (one thread
// loads the Q tile once and streams K/V blocks through a `max_concurrent_steps`-deep ring by
// TMA, with mbarriers), warpgroups 1 and 2 are consumers of 64 rows each: S = Q.K^T by wgmma
// from shared memory, the online softmax in registers, P fed to O += P.V as wgmma's A operand
// from registers, O rescaled between blocks behind a wgmma.fence (the two MMAs and the softmax
// serial, or pipelined within the warpgroup: ConsumerSchedule). Causal problems stop at the
// last block the CTA's last row sees; keys past seq_kv and above the diagonal are masked.
// Contract: why_invalid() is empty for a config the builder makes a correct kernel of, else the
// rule and why; build() throws Error{InvalidInput} for an invalid one. Launch:
//   grid (ceil(seq_q / 128), heads, batch), 384 threads, dynamic_smem_bytes;
//   arguments: the Q, K and V tensor maps (attention_tensor_map(): 4-D over [b][s][h][d], so
//   a box never crosses into the next batch and ragged rows read as zero), O and LSE pointers,
//   then seq_q, seq_kv and heads / kv_heads as i32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attention/attention_problem.h"

namespace mgpu::kernels::attention {

// How a consumer warpgroup orders its two MMAs and the softmax of each KV block:
//  - Serial: S_j = Q.K_j^T, wait, softmax, O += P_j.V_j, wait -- the tensor cores idle while
//    the warpgroup exponentiates (the other warpgroup's MMAs fill some of it);
//  - IntraWgOverlap: FlashAttention-3's intra-warpgroup pipelining: S_j is issued, then
//    O += P_{j-1}.V_{j-1}; the softmax of S_j runs while that P.V MMA is in flight, so P_{j-1}
//    stays live beside S_j and P_j (more registers), and block j's K must be in the ring while
//    block j-1's V is still read (two stages at least).
enum class ConsumerSchedule { Serial, IntraWgOverlap };

// Knobs named as Pallas:MGPU's attention TuningConfig names them, and the consumer schedule.
struct AttentionConfig {
  int block_q = 64;                // query rows per consumer warpgroup (wgmma's M)
  int block_kv = 64;               // keys per step: the S tile's width
  int max_concurrent_steps = 2;    // K/V stages in flight
  ConsumerSchedule schedule = ConsumerSchedule::Serial;
};

struct AttentionRejection {
  std::string rule, reason;
};
std::optional<AttentionRejection> why_invalid(const AttentionProblem& p, const AttentionConfig& c);

struct BuiltAttention {
  std::string mlir;
  std::string kernel_name = "attention";
  int block_threads = 384;
  int dynamic_smem_bytes = 0;
  unsigned grid[3] = {1, 1, 1};
};
// Defects the checker tests build on purpose (each must be caught: reported by the virtual
// device or a wrong result); a default AttentionFaults builds the kernel as it should be.
struct AttentionFaults {
  bool no_fence_after_rescale = false;  // O rescaled, then O += P.V without a wgmma.fence
  bool release_before_retire = false;   // the K/V stage released before the P.V wgmma retired
  bool causal_off_by_one = false;       // each row also sees the key just past its diagonal
};
BuiltAttention build_attention_sm90(const AttentionProblem& p, const AttentionConfig& c,
                                    const AttentionFaults& faults = {});
// build_attention_sm90()'s launch shape alone (mlir empty): what a launcher of an already
// compiled kernel needs.
BuiltAttention attention_launch(const AttentionProblem& p, const AttentionConfig& c);

// The 4-D tensor map of Q (is_q) or K/V for a config: dims (head_dim, heads, seq, batch),
// innermost first, byte strides of dims 1..3, and the box (64 columns, 1 head, rows, 1).
struct AttentionTensorMap {
  std::uint64_t dims[4];
  std::uint64_t strides[3];
  std::uint32_t box[4];
};
AttentionTensorMap attention_tensor_map(const AttentionProblem& p, const AttentionConfig& c, bool is_q);

}  // namespace mgpu::kernels::attention
