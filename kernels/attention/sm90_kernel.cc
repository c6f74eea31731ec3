#include "kernels/attention/sm90_kernel.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ir/barrier.h"
#include "core/ir/global_memory.h"
#include "core/ir/kernel_module.h"
#include "core/ir/register_math.h"
#include "core/ir/roles.h"
#include "core/ir/smem_plan.h"
#include "core/ir/tma.h"
#include "core/ir/wgmma.h"
#include "core/mlir_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mgpu::kernels::attention {
namespace {

using core::ir::BarrierRing;
using core::ir::Emitter;
using core::ir::MmaInput;
using core::ir::Swizzle;
using mlir::Value;
using Values = llvm::SmallVector<Value>;

constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;  // 128 x 40 + 256 x 232 <= 64K registers per SM
constexpr int kAtomCols = 64;            // 16-bit elements per 128-byte swizzle span
constexpr int kCtaRows = 128;            // two consumer warpgroups of 64 rows

struct Layout {
  int atoms = 1;                   // 64-column swizzle atoms of a head_dim row
  std::int64_t q_wg = 0;           // one consumer's Q tile: atoms x 64 rows x 128 B
  std::int64_t kv_stage = 0;       // one K (or V) stage: atoms x block_kv rows x 128 B
  std::int64_t q_off = 0, k_off = 0, v_off = 0, q_full = 0, k_full = 0, v_full = 0, empty = 0;
  std::int64_t total = 0;
};

Layout layout(const AttentionProblem& p, const AttentionConfig& c) {
  Layout l;
  l.atoms = static_cast<int>(p.head_dim / kAtomCols);
  l.q_wg = std::int64_t(l.atoms) * c.block_q * 128;
  l.kv_stage = std::int64_t(l.atoms) * c.block_kv * 128;
  core::ir::SmemPlan plan;
  l.q_off = plan.alloc("q", 2 * l.q_wg, 1024);
  l.k_off = plan.alloc("k", c.max_concurrent_steps * l.kv_stage, 1024);
  l.v_off = plan.alloc("v", c.max_concurrent_steps * l.kv_stage, 1024);
  l.q_full = plan.alloc("q_full", BarrierRing::bytes(1), 8);
  l.k_full = plan.alloc("k_full", BarrierRing::bytes(c.max_concurrent_steps), 8);
  l.v_full = plan.alloc("v_full", BarrierRing::bytes(c.max_concurrent_steps), 8);
  l.empty = plan.alloc("empty", BarrierRing::bytes(c.max_concurrent_steps), 8);
  l.total = plan.total_bytes();
  return l;
}

Value at(Emitter& e, Value s, int i) { return mlir::LLVM::ExtractValueOp::create(e.b, e.loc, s, llvm::ArrayRef<std::int64_t>{i}); }
Value with(Emitter& e, Value s, int i, Value v) {
  return mlir::LLVM::InsertValueOp::create(e.b, e.loc, s, v, llvm::ArrayRef<std::int64_t>{i});
}
Value slt(Emitter& e, Value a, Value b) {
  return mlir::arith::CmpIOp::create(e.b, e.loc, mlir::arith::CmpIPredicate::slt, a, b);
}
Value feq(Emitter& e, Value a, Value b) {
  return mlir::arith::CmpFOp::create(e.b, e.loc, mlir::arith::CmpFPredicate::OEQ, a, b);
}

// The accumulator register i of a thread holds row lane/4 + 8 * ((i / 2) % 2) of its warp's 16
// rows, column 8 * (i / 4) + 2 * (lane % 4) + i % 2 (PTX ISA "Matrix Fragments for
// wgmma.mma_async.m64nNk16", D).
int half_of(int i) { return (i / 2) % 2; }
int col_of(int i) { return 8 * (i / 4) + i % 2; }  // plus 2 * (lane % 4)

// Keys [0, n) seen by query row `row` (bottom-right causal alignment, attention_problem.h), as
// the count of KV blocks of the CTA whose last row is `last_row`.
Value kv_blocks(Emitter& e, const AttentionProblem& p, const AttentionConfig& c, Value seq_q, Value seq_kv, Value last_row) {
  Value keys = seq_kv;
  if (p.causal) {
    Value seen = e.sub(e.add(e.add(last_row, e.c32(1)), seq_kv), seq_q);  // may be <= 0
    keys = e.select(slt(e, seen, seq_kv), seen, seq_kv);
    keys = e.select(slt(e, keys, e.c32(0)), e.c32(0), keys);
  }
  return e.ceil_div(keys, e.c32(c.block_kv));
}

}  // namespace

std::optional<AttentionRejection> why_invalid(const AttentionProblem& p, const AttentionConfig& c) {
  if (c.block_q != 64) return AttentionRejection{"block_q", "each consumer warpgroup computes 64 rows (one wgmma M)"};
  if (c.block_kv != 64 && c.block_kv != 128)
    return AttentionRejection{"block_kv", fmt::format("block_kv {} is not 64 or 128", c.block_kv)};
  if (c.max_concurrent_steps < 1 || c.max_concurrent_steps > 4)
    return AttentionRejection{"max_concurrent_steps", "between 1 and 4 K/V stages"};
  const bool overlap = c.schedule == ConsumerSchedule::IntraWgOverlap;
  if (overlap && c.max_concurrent_steps < 2)
    return AttentionRejection{"max_concurrent_steps", "the intra-warpgroup overlap reads block j's K while block j-1's "
                                                      "V is still in the ring: two stages at least"};
  // Registers of a consumer thread: O (head_dim / 2 f32), S (block_kv / 2) and P (block_kv / 4
  // packed pairs) live together at the P.V MMA -- with the overlap, P of the block before too,
  // read by the P.V MMA in flight while the softmax makes the next P. 40 of the 232 are kept
  // for addresses, masks and the softmax state; the space's compile (ptxas's spill report) is
  // what proves the estimate.
  const std::int64_t live = p.head_dim / 2 + c.block_kv / 2 + (overlap ? 2 : 1) * (c.block_kv / 4);
  if (live > kConsumerRegisters - 40)
    return AttentionRejection{"registers", fmt::format("O, S and P need {} registers per consumer thread, over the {} "
                                                       "that leave room for addresses and softmax state",
                                                       live, kConsumerRegisters - 40)};
  const Layout l = layout(p, c);
  if (l.total > 227 * 1024)
    return AttentionRejection{"smem", fmt::format("{} bytes of shared memory, over the 227 KiB a CTA may have", l.total)};
  if (p.seq_q > (std::int64_t{1} << 30) || p.seq_kv > (std::int64_t{1} << 30))
    return AttentionRejection{"sequence", "seq_q and seq_kv at most 2^30 (1073741824): the kernel counts rows and keys "
                                          "in i32 arithmetic with room for a block past the end"};
  // The grid is (query blocks, heads, batch); CUDA takes at most 65535 in y and z.
  if (p.heads > 65535 || p.batch > 65535)
    return AttentionRejection{"grid", fmt::format("heads ({}) and batch ({}) are the grid's y and z, at most 65535 each",
                                                  p.heads, p.batch)};
  return std::nullopt;
}

AttentionTensorMap attention_tensor_map(const AttentionProblem& p, const AttentionConfig& c, bool is_q) {
  const std::uint64_t heads = static_cast<std::uint64_t>(is_q ? p.heads : p.kv_heads);
  const std::uint64_t seq = static_cast<std::uint64_t>(is_q ? p.seq_q : p.seq_kv);
  const std::uint64_t d = static_cast<std::uint64_t>(p.head_dim), b = static_cast<std::uint64_t>(p.batch);
  AttentionTensorMap m{{d, heads, seq, b}, {d * 2, heads * d * 2, seq * heads * d * 2},
                       {kAtomCols, 1, static_cast<std::uint32_t>(is_q ? c.block_q : c.block_kv), 1}};
  return m;
}

BuiltAttention build_attention_sm90(const AttentionProblem& p, const AttentionConfig& c, const AttentionFaults& faults) {
  validate(p);
  if (auto r = why_invalid(p, c))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
  const Layout g = layout(p, c);
  const int S = c.max_concurrent_steps;
  const MmaInput input = p.dtype == DType::F16 ? MmaInput::F16 : MmaInput::BF16;
  const int D = static_cast<int>(p.head_dim), BKV = c.block_kv;

  auto ctx = core::make_mlir_context();
  core::ir::KernelModule km(*ctx, "attention_sm90");
  mlir::OpBuilder probe(ctx.get());
  Emitter tmp{probe, probe.getUnknownLoc()};
  mlir::Type ptr = tmp.global_ptr_type(), i32 = tmp.i32();
  core::ir::KernelBody kb = km.add_kernel("attention", {ptr, ptr, ptr, ptr, ptr, i32, i32, i32}, 384);
  Emitter& e = kb.e;
  Value q_map = kb.args[0], k_map = kb.args[1], v_map = kb.args[2];
  Value out = core::ir::global(e, kb.args[3]), lse = core::ir::global(e, kb.args[4]);
  Value seq_q = kb.args[5], seq_kv = kb.args[6], group = kb.args[7];

  Value smem = km.dynamic_smem(e);
  BarrierRing q_full(e.smem_offset(smem, g.q_full), 1), k_full(e.smem_offset(smem, g.k_full), S),
      v_full(e.smem_offset(smem, g.v_full), S), empty(e.smem_offset(smem, g.empty), S);
  Value zero = e.c32(0), one = e.c32(1);
  Value tid = e.thread_idx();
  e.if_then(e.eq(tid, zero), [&] {
    q_full.init(e, 1);
    k_full.init(e, 1);
    v_full.init(e, 1);
    // One arrival per consumer warp: wgmma.wait_group speaks for its own warp only (PTX ISA
    // wgmma.wait_group), so a stage is free when all 8 warps reading it have retired their MMAs.
    empty.init(e, 8);
    core::ir::fence_barrier_init(e);
  });
  e.barrier_sync();

  Value batch = e.block_idx(2), head = e.block_idx(1);
  Value q_row0 = e.mul(e.block_idx(0), e.c32(kCtaRows));
  Value kv_head = e.div(head, group);
  Value wg = e.warpgroup_idx();
  auto blocks_of_cta = [&] {
    Value last = e.add(q_row0, e.c32(kCtaRows - 1));
    Value last_q = e.sub(seq_q, one);
    last = e.select(slt(e, last, last_q), last, last_q);
    return kv_blocks(e, p, c, seq_q, seq_kv, last);
  };
  const std::int64_t stage_bytes = g.kv_stage;

  // ---- producer: warpgroup 0; one thread issues every TMA load.
  e.if_then(e.eq(wg, zero), [&] {
    core::ir::setmaxnreg(e, kProducerRegisters, false);
    e.if_then(e.eq(e.warp_idx(), zero), [&] {
      e.if_then(core::ir::elect_one(e), [&] {
        Value n_blocks = blocks_of_cta();
        Value slot0 = zero;
        q_full.arrive_expect_tx(e, slot0, 2 * g.q_wg);
        for (int cw = 0; cw < 2; ++cw)
          for (int a = 0; a < g.atoms; ++a)
            core::ir::tma_load(e, q_map, e.smem_offset(smem, g.q_off + cw * g.q_wg + std::int64_t(a) * c.block_q * 128),
                               q_full.slot_ptr(e, slot0),
                               {e.c32(a * kAtomCols), head, e.add(q_row0, e.c32(cw * c.block_q)), batch});
        e.for_loop(zero, n_blocks, one, {}, [&](Value j, mlir::ValueRange) {
          e.if_then(e.ult(e.c32(S - 1), j), [&] { empty.wait_step(e, e.sub(j, e.c32(S))); });
          core::ir::SlotPhase sp = BarrierRing::slot_phase(e, j, S);
          Value kv0 = e.mul(j, e.c32(BKV));
          auto load = [&](const BarrierRing& full, Value map, std::int64_t region) {
            full.arrive_expect_tx(e, sp.slot, stage_bytes);
            Value stage = e.smem_offset(smem, e.add(e.c32(region), e.mul(sp.slot, e.c32(stage_bytes))));
            for (int a = 0; a < g.atoms; ++a)
              core::ir::tma_load(e, map, e.smem_offset(stage, std::int64_t(a) * BKV * 128), full.slot_ptr(e, sp.slot),
                                 {e.c32(a * kAtomCols), kv_head, kv0, batch});
          };
          load(k_full, k_map, g.k_off);
          load(v_full, v_map, g.v_off);
          return Values{};
        });
      });
    });
  });

  // ---- consumers: warpgroups 1 and 2, 64 query rows each.
  e.if_then(e.ult(zero, wg), [&] {
    core::ir::setmaxnreg(e, kConsumerRegisters, true);
    Value cw = e.sub(wg, one);
    Value local = e.rem(tid, e.c32(128));
    Value warp = e.div(local, e.c32(32)), lane = e.rem(local, e.c32(32));
    Value row_base = e.add(e.add(q_row0, e.mul(cw, e.c32(c.block_q))), e.add(e.mul(warp, e.c32(16)), e.div(lane, e.c32(4))));
    Value rows[2] = {row_base, e.add(row_base, e.c32(8))};
    Value wg_row0 = e.add(q_row0, e.mul(cw, e.c32(c.block_q)));  // the warpgroup's first row
    Value lane_col = e.mul(e.rem(lane, e.c32(4)), e.c32(2));
    Value n_blocks = blocks_of_cta();
    Value q_tile = e.smem_offset(smem, e.add(e.c32(g.q_off), e.mul(cw, e.c32(g.q_wg))));
    // Descriptors (PTX ISA "Matrix Descriptor Format"): K-major 128-byte swizzled tiles for Q
    // and K (a k16 step is 32 bytes inside an atom; the next atom is the next region of rows),
    // V MN-major (head_dim contiguous): atoms of 64 columns block_kv rows apart (LBO), a k16
    // step 16 rows of 128 bytes.
    Value q_desc = core::ir::smem_descriptor(e, q_tile, Swizzle::B128, 16, 1024);
    auto q_slice = [&](int kk) {
      const int kbytes = kk * 32;
      return core::ir::descriptor_advanced(e, q_desc, std::int64_t(kbytes / 128) * c.block_q * 128 + kbytes % 128);
    };
    const double scale_log2 = M_LOG2E / std::sqrt(double(D));
    Value neg_inf = core::ir::f32(e, -INFINITY), f0 = core::ir::f32(e, 0.0);
    Value yes = mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getBoolAttr(true));
    Value no = mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getBoolAttr(false));

    // The stage of block j: K and V share one slot (one `empty` arrival frees both).
    auto k_stage_of = [&](Value slot) { return e.smem_offset(smem, e.add(e.c32(g.k_off), e.mul(slot, e.c32(stage_bytes)))); };
    auto v_stage_of = [&](Value slot) { return e.smem_offset(smem, e.add(e.c32(g.v_off), e.mul(slot, e.c32(stage_bytes)))); };
    // S = Q.K^T of the K stage in `slot`, issued (not waited for).
    auto issue_scores = [&](Value slot) {
      Value k_desc = core::ir::smem_descriptor(e, k_stage_of(slot), Swizzle::B128, 16, 1024);
      Value s = core::ir::wgmma_undefined_accumulator(e, BKV);
      for (int kk = 0; kk < D / 16; ++kk) {
        const int kbytes = kk * 32;
        Value kd = core::ir::descriptor_advanced(e, k_desc, std::int64_t(kbytes / 128) * BKV * 128 + kbytes % 128);
        s = core::ir::wgmma_scaled(e, s, q_slice(kk), kd, BKV, input, true, true, kk == 0 ? no : yes);
      }
      core::ir::wgmma_commit(e);
      return s;
    };
    // O += P.V of the V stage in `slot`, issued (not waited for); P's fragments and O must be
    // written before the wgmma.fence that precedes it.
    auto issue_pv = [&](Value acc_o, const llvm::SmallVector<Values>& frags, Value slot) {
      Value v_desc = core::ir::smem_descriptor(e, v_stage_of(slot), Swizzle::B128, std::int64_t(BKV) * 128, 1024);
      for (int ch = 0; ch < BKV / 16; ++ch)
        acc_o = core::ir::wgmma_reg_a(e, acc_o, frags[ch], core::ir::descriptor_advanced(e, v_desc, std::int64_t(ch) * 16 * 128),
                                      D, input, false, yes);
      core::ir::wgmma_commit(e);
      return acc_o;
    };
    auto release = [&](Value slot) { e.if_then(e.eq(lane, zero), [&] { empty.arrive(e, slot); }); };
    // Masks and the online softmax of block j's scores `s` (retired): updates m and l, returns
    // P (as an accumulator) and each row half's rescale factor of O.
    struct Softmax {
      Value p;
      Value alpha[2];
    };
    auto softmax = [&](Value j, Value s, Value m[2], Value l[2]) {
      // Masks: keys at or past seq_kv; with causal, keys after row + seq_kv - seq_q. Only the
      // blocks that hold such a key for some row of this warpgroup pay for the selects (a
      // uniform branch): the last block of a ragged seq_kv, and the blocks a causal diagonal
      // crosses.
      // Keys [0, limit) seen by `row`: min(seq_kv, row + 1 + seq_kv - seq_q) with causal.
      auto key_limit = [&](Value row) {
        if (!p.causal) return seq_kv;
        Value diag = e.sub(e.add(e.add(row, faults.causal_off_by_one ? e.c32(2) : one), seq_kv), seq_q);
        return e.select(slt(e, diag, seq_kv), diag, seq_kv);
      };
      Value key0 = e.add(e.mul(j, e.c32(BKV)), lane_col);
      Value limit[2] = {key_limit(rows[0]), key_limit(rows[1])};
      Value block_end = e.mul(e.add(j, one), e.c32(BKV));  // one past the block's last key
      Value first_limit = key_limit(wg_row0);              // the smallest limit of any row of the warpgroup
      s = e.if_else(slt(e, first_limit, block_end), {s.getType()},
                    [&] {
                      Value m = s;
                      for (int i = 0; i < BKV / 2; ++i) {
                        Value key = e.add(key0, e.c32(col_of(i)));
                        m = with(e, m, i, e.select(slt(e, key, limit[half_of(i)]), at(e, m, i), neg_inf));
                      }
                      return Values{m};
                    },
                    [&] { return Values{s}; })[0];
      // Online softmax (scores in log2 units: scale * log2(e) folded into one multiply). A row
      // with no key seen yet keeps m = -inf; its exponent base is then 0, so its p and its
      // rescale factor are 0 rather than NaN (-inf - -inf).
      Softmax out;
      Value base[2], neg_base[2];
      for (int h = 0; h < 2; ++h) {
        Value mx = neg_inf;
        for (int i = 0; i < BKV / 2; ++i)
          if (half_of(i) == h) mx = core::ir::fmax(e, mx, at(e, s, i));
        Value m_new = core::ir::fmax(e, m[h], core::ir::fmul(e, core::ir::quad_max(e, mx), core::ir::f32(e, scale_log2)));
        base[h] = e.select(feq(e, m_new, neg_inf), f0, m_new);
        neg_base[h] = core::ir::fsub(e, f0, base[h]);
        out.alpha[h] = core::ir::ex2_approx(e, core::ir::fsub(e, m[h], base[h]));
        m[h] = m_new;
      }
      out.p = core::ir::wgmma_undefined_accumulator(e, BKV);
      Value row_sum[2] = {f0, f0};
      for (int i = 0; i < BKV / 2; ++i) {
        const int h = half_of(i);
        // One FFMA: s * scale - m (a separate mul.rn and sub.rn would not be contracted).
        Value pi = core::ir::ex2_approx(e, core::ir::ffma(e, at(e, s, i), core::ir::f32(e, scale_log2), neg_base[h]));
        row_sum[h] = core::ir::fadd(e, row_sum[h], pi);
        out.p = with(e, out.p, i, pi);
      }
      for (int h = 0; h < 2; ++h) l[h] = core::ir::fadd(e, core::ir::fmul(e, l[h], out.alpha[h]), row_sum[h]);
      return out;
    };
    auto rescale = [&](Value acc_o, const Value alpha[2]) {
      for (int i = 0; i < D / 2; ++i) acc_o = with(e, acc_o, i, core::ir::fmul(e, at(e, acc_o, i), alpha[half_of(i)]));
      return acc_o;
    };
    // P as wgmma A fragments, pinned (core/ir/wgmma.h: LLVM would sink their cvts past the fence).
    auto fragments = [&](Value pacc) {
      llvm::SmallVector<Values> frags;
      for (int ch = 0; ch < BKV / 16; ++ch)
        frags.push_back(core::ir::pin_registers(e, core::ir::a_fragment_from_accumulator(e, pacc, ch, input)));
      return frags;
    };
    auto fence = [&] {
      if (!faults.no_fence_after_rescale) core::ir::wgmma_fence(e);
    };

    q_full.wait(e, zero, zero);
    Values init = {neg_inf, neg_inf, f0, f0, core::ir::wgmma_zero_accumulator(e, D)};
    Values fin;
    if (c.schedule == ConsumerSchedule::Serial) {
      fin = e.for_loop(zero, n_blocks, one, init, [&](Value j, mlir::ValueRange carried) {
        Value m[2] = {carried[0], carried[1]}, l[2] = {carried[2], carried[3]};
        Value acc_o = carried[4];
        core::ir::SlotPhase sp = BarrierRing::slot_phase(e, j, S);
        k_full.wait(e, sp.slot, sp.parity);
        core::ir::wgmma_fence(e);
        Value s = issue_scores(sp.slot);
        core::ir::wgmma_wait(e, 0);
        Softmax sm = softmax(j, s, m, l);
        acc_o = rescale(acc_o, sm.alpha);
        // P and the rescaled O pinned before the fence (core/ir/wgmma.h: LLVM would sink them past it).
        llvm::SmallVector<Values> frags = fragments(sm.p);
        acc_o = core::ir::pin_accumulator(e, acc_o);
        v_full.wait(e, sp.slot, sp.parity);
        fence();
        acc_o = issue_pv(acc_o, frags, sp.slot);
        if (faults.release_before_retire) release(sp.slot);
        core::ir::wgmma_wait(e, 0);
        if (!faults.release_before_retire) release(sp.slot);
        return Values{m[0], m[1], l[0], l[1], acc_o};
      });
    } else {
      // Intra-warpgroup overlap. Block 0's scores and softmax first; then per block j >= 1:
      // issue S_j, issue O += P_{j-1}.V_{j-1}, wait for S_j alone (wait_group 1: groups retire in
      // order), the softmax of S_j while the P.V MMA runs, wait for it, free block j-1's stage,
      // rescale O; last, O += P_{n-1}.V_{n-1}. A warpgroup with no block skips it all.
      const int chunk = 4;  // registers of one A fragment
      fin = e.if_else(slt(e, zero, n_blocks), mlir::TypeRange(mlir::ValueRange(init)), [&] {
        Value m[2] = {init[0], init[1]}, l[2] = {init[2], init[3]};
        core::ir::SlotPhase sp0 = BarrierRing::slot_phase(e, zero, S);
        k_full.wait(e, sp0.slot, sp0.parity);
        core::ir::wgmma_fence(e);
        Value s0 = issue_scores(sp0.slot);
        core::ir::wgmma_wait(e, 0);
        s0 = core::ir::pin_accumulator(e, s0);  // read only after the wait
        Softmax first = softmax(zero, s0, m, l);  // O is zero: nothing to rescale
        Values carried0 = {m[0], m[1], l[0], l[1], init[4]};
        for (const Values& f : fragments(first.p)) carried0.append(f.begin(), f.end());
        Values loop = e.for_loop(one, n_blocks, one, carried0, [&](Value j, mlir::ValueRange carried) {
          Value m[2] = {carried[0], carried[1]}, l[2] = {carried[2], carried[3]};
          Value acc_o = core::ir::pin_accumulator(e, carried[4]);
          llvm::SmallVector<Values> frags;
          for (int ch = 0; ch < BKV / 16; ++ch)
            frags.push_back(core::ir::pin_registers(e, carried.slice(5 + ch * chunk, chunk)));
          core::ir::SlotPhase sp = BarrierRing::slot_phase(e, j, S);
          core::ir::SlotPhase prev = BarrierRing::slot_phase(e, e.sub(j, one), S);
          k_full.wait(e, sp.slot, sp.parity);
          v_full.wait(e, prev.slot, prev.parity);
          fence();  // O rescaled and P_{j-1} made since the last MMA
          Value s = issue_scores(sp.slot);
          acc_o = issue_pv(acc_o, frags, prev.slot);
          core::ir::wgmma_wait(e, 1);             // S_j retired; the P.V MMA may still run
          s = core::ir::pin_accumulator(e, s);    // read only after the wait
          Softmax sm = softmax(j, s, m, l);
          if (faults.release_before_retire) release(prev.slot);
          core::ir::wgmma_wait(e, 0);
          if (!faults.release_before_retire) release(prev.slot);
          // P_j packed only now: LLVM gives the packed P the registers of the loop's P_{j-1},
          // which the P.V MMA reads until this wait (found by the virtual device).
          llvm::SmallVector<Values> next = fragments(core::ir::pin_accumulator(e, sm.p));
          acc_o = rescale(core::ir::pin_accumulator(e, acc_o), sm.alpha);
          Values out = {m[0], m[1], l[0], l[1], acc_o};
          for (const Values& f : next) out.append(f.begin(), f.end());
          return out;
        });
        Value acc_o = core::ir::pin_accumulator(e, loop[4]);
        llvm::SmallVector<Values> frags;
        for (int ch = 0; ch < BKV / 16; ++ch)
          frags.push_back(core::ir::pin_registers(e, mlir::ValueRange(loop).slice(5 + ch * chunk, chunk)));
        core::ir::SlotPhase last = BarrierRing::slot_phase(e, e.sub(n_blocks, one), S);
        v_full.wait(e, last.slot, last.parity);
        fence();
        acc_o = issue_pv(acc_o, frags, last.slot);
        if (faults.release_before_retire) release(last.slot);
        core::ir::wgmma_wait(e, 0);
        if (!faults.release_before_retire) release(last.slot);
        return Values{loop[0], loop[1], loop[2], loop[3], core::ir::pin_accumulator(e, acc_o)};
      }, [&] { return Values(init.begin(), init.end()); });
    }

    // Epilogue: O / l as the dtype, LSE = (m + log2 l) ln 2; a row with no key gets O = 0 and
    // LSE = -inf (attention_problem.h). Rows past seq_q are computed but not stored.
    Value heads = e.grid_dim(1);
    Value acc_o = fin[4];
    for (int h = 0; h < 2; ++h) {
      Value total = core::ir::quad_sum(e, fin[2 + h]);
      Value empty_row = feq(e, total, f0);
      Value inv = e.select(empty_row, f0, core::ir::fdiv(e, core::ir::f32(e, 1.0), total));
      e.if_then(slt(e, rows[h], seq_q), [&] {
        // Element offset of (batch, row, head, 0) in [b][s][h][d].
        Value row_elem = e.mul(e.add(e.mul(e.add(e.mul(batch, seq_q), rows[h]), heads), head), e.c32(D));
        for (int i = 0; i < D / 2; i += 2) {
          if (half_of(i) != h) continue;
          Value lo = core::ir::fmul(e, at(e, acc_o, i), inv), hi = core::ir::fmul(e, at(e, acc_o, i + 1), inv);
          Value col = e.add(lane_col, e.c32(col_of(i)));
          Value addr = core::ir::global_offset(e, out, e.zext64(e.mul(e.add(row_elem, col), e.c32(2))));
          mlir::LLVM::StoreOp::create(e.b, e.loc, core::ir::pack_16x2(e, lo, hi, input), addr, 4);
        }
        e.if_then(e.eq(e.rem(lane, e.c32(4)), zero), [&] {
          Value value = core::ir::fmul(e, core::ir::fadd(e, fin[h], core::ir::lg2_approx(e, total)), core::ir::f32(e, M_LN2));
          value = e.select(empty_row, core::ir::f32(e, -INFINITY), value);
          Value idx = e.add(e.mul(e.add(e.mul(batch, heads), head), seq_q), rows[h]);
          mlir::LLVM::StoreOp::create(e.b, e.loc, value, core::ir::global_offset(e, lse, e.zext64(e.mul(idx, e.c32(4)))), 4);
        });
      });
    }
  });

  BuiltAttention built = attention_launch(p, c);
  built.mlir = km.to_text();
  return built;
}

BuiltAttention attention_launch(const AttentionProblem& p, const AttentionConfig& c) {
  BuiltAttention built;
  built.dynamic_smem_bytes = static_cast<int>(layout(p, c).total);
  built.grid[0] = static_cast<unsigned>((p.seq_q + kCtaRows - 1) / kCtaRows);
  built.grid[1] = static_cast<unsigned>(p.heads);
  built.grid[2] = static_cast<unsigned>(p.batch);
  return built;
}

}  // namespace mgpu::kernels::attention
