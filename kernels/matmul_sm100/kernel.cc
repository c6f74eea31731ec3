#include "kernels/matmul_sm100/kernel.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/ir/barrier.h"
#include "core/ir/kernel_module.h"
#include "core/ir/roles.h"
#include "core/ir/tcgen05.h"
#include "core/ir/tma.h"
#include "core/mlir_context.h"
#include "kernels/matmul_common/operand_tma.h"
#include "kernels/matmul_sm100/validity.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mgpu::kernels::sm100 {
namespace {

using core::ir::BarrierRing;
using core::ir::Emitter;
using core::ir::Swizzle;
using mlir::Value;
using Values = llvm::SmallVector<Value>;

constexpr int kThreads = 256;
constexpr int kEpilogueBarrier = 1;  // named barrier of the epilogue warpgroup

// The epilogue: one TMEM lane (row) per thread, `epilogue_tile_n` columns at a time, written
// into a swizzled SMEM piece (conflict-free 16-byte stores) and stored with TMA.
void emit_epilogue_piece(Emitter& e, const MatmulProblem& p, const MatmulConfig& c, Value tmem_cols, Value buffer,
                         Value row) {
  const int en = c.epilogue_tile_n, out = size_in_bytes(p.out_dtype);
  const int atom_bytes = epilogue_atom_bytes(p, c), chunk_elems = 16 / out;
  Value raw = core::ir::tmem_load(e, tmem_cols, en);  // waits for the load: usable at once
  auto f32v = mlir::VectorType::get({en}, e.b.getF32Type());
  Value acc = mlir::LLVM::BitcastOp::create(e.b, e.loc, f32v, raw);
  mlir::Type out_t = element_type(e, p.out_dtype);
  auto chunk_t = mlir::VectorType::get({chunk_elems}, out_t);
  const int mask = atom_bytes / 16 - 1;  // Swizzle<B,4,3>: 16-byte chunk ^= (offset >> 7) & mask
  for (int c0 = 0; c0 < en; c0 += chunk_elems) {
    Value chunk = mlir::LLVM::UndefOp::create(e.b, e.loc, chunk_t);
    for (int x = 0; x < chunk_elems; ++x) {
      Value v = mlir::LLVM::ExtractElementOp::create(e.b, e.loc, acc, e.c32(c0 + x));
      if (p.out_dtype != DType::F32) v = mlir::arith::TruncFOp::create(e.b, e.loc, out_t, v);
      chunk = mlir::LLVM::InsertElementOp::create(e.b, e.loc, chunk, v, e.c32(x));
    }
    const int byte = c0 * out, atom = byte / atom_bytes, in_atom = byte % atom_bytes;
    Value linear = e.add(e.mul(row, e.c32(atom_bytes)), e.c32(in_atom));
    Value swizzled = e.bit_xor(linear, e.shl(e.bit_and(e.shr(linear, e.c32(7)), e.c32(mask)), e.c32(4)));
    Value off = e.add(e.c32(std::int64_t(atom) * c.tile_m * atom_bytes), swizzled);
    mlir::LLVM::StoreOp::create(e.b, e.loc, chunk, e.smem_offset(buffer, off), 16);
  }
}

}  // namespace

TileWalkShape walk_shape(const MatmulConfig& c) { return {c.tile_m, c.mma_n(), c.cluster_size(), 1}; }

mgpu_lm_matmul launch_consts(const MatmulConfig& c) {
  mgpu_lm_matmul l{};
  l.cta_tile_m = c.tile_m;
  l.cta_tile_n = c.mma_n();
  l.cluster_m = c.cluster_size();
  l.cluster_n = 1;
  l.tile_k = c.tile_k;
  l.schedule = MGPU_LM_DATA_PARALLEL;
  l.split_k = 1;
  l.minor_is_n = c.grid_minor_dim == Dim::N ? 1 : 0;
  l.grid_tile_width = c.grid_tile_width;
  return l;
}

unsigned persistent_grid(const MatmulProblem& p, const MatmulConfig& c, int sm_count) {
  const mgpu_lm_matmul l = launch_consts(c);
  return mgpu_lm_grid(&l, p.m, p.n, p.k, sm_count);
}

core::BuiltKernel build_matmul(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch) {
  check_problem(p);
  if (auto r = why_invalid(p, c, arch))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
  return build_matmul_unchecked(p, c);
}

core::BuiltKernel build_matmul_unchecked(const MatmulProblem& p, const MatmulConfig& c) {
  const int S = c.max_concurrent_steps, in = size_in_bytes(p.in_dtype), out = size_in_bytes(p.out_dtype);
  const bool pair = c.collective != 0, b_k_major = p.b_layout == BLayout::NK;
  const int swz = k_swizzle_bytes(p.in_dtype, c.tile_k), k_atoms = c.tile_k * in / swz;
  const std::int64_t a_stage = a_stage_bytes(p, c), b_stage = b_stage_bytes(p, c);
  const OperandLoads la = plan_loads(c.tile_m, k_atoms, swz, in, false);
  const OperandLoads lb = b_k_major ? plan_loads(c.tile_n, k_atoms, swz, in, false)
                                    : plan_loads(c.tile_k, c.tile_n * in / 128, 128, in, false);
  const core::ir::SmemPlan plan = smem_plan(p, c);
  const int atom_bytes = epilogue_atom_bytes(p, c), atom_elems = atom_bytes / out;
  const int piece_bytes = c.tile_m * c.epilogue_tile_n * out;

  auto ctx = core::make_mlir_context();
  core::ir::KernelModule km(*ctx, "matmul_sm100");
  mlir::OpBuilder probe(ctx.get());
  Emitter tmp{probe, probe.getUnknownLoc()};
  mlir::Type ptr = tmp.global_ptr_type(), i32 = tmp.i32();
  core::ir::KernelBody kb = km.add_kernel("matmul", {ptr, ptr, ptr, i32, i32, i32, i32, i32}, kThreads);
  Emitter& e = kb.e;
  Value desc_a = kb.args[0], desc_b = kb.args[1], desc_c = kb.args[2];
  Value M = kb.args[3], N = kb.args[4], K = kb.args[5], minor_is_n = kb.args[6], band_width = kb.args[7];

  Value smem = km.dynamic_smem(e);
  auto region = [&](const char* name) { return e.smem_offset(smem, plan.region(name).offset); };
  BarrierRing full(region("full"), S), empty(region("empty"), S);
  BarrierRing acc_full(region("acc_full"), 2), acc_empty(region("acc_empty"), 2);
  Value tmem_slot = region("tmem_slot");
  Value zero = e.c32(0), one = e.c32(1);
  Value tid = e.thread_idx(), warp = e.warp_idx();

  e.if_then(e.eq(tid, zero), [&] {
    full.init(e, 1);
    empty.init(e, 1);
    acc_full.init(e, 1);
    acc_empty.init(e, c.cluster_size());  // each CTA's epilogue frees its half of the pair's accumulator
    core::ir::fence_barrier_init(e);
  });
  // Warp 1 allocates TMEM (in both CTAs of a pair: cta_group::2 allocates collectively).
  e.if_then(e.eq(warp, one), [&] {
    core::ir::tmem_alloc(e, tmem_slot, c.tmem_alloc_columns(), pair);
    core::ir::tmem_relinquish(e, pair);
  });
  core::ir::tcgen05_fence(e, true);
  if (pair) core::ir::cluster_sync(e);  // the peer's barriers exist before any load completes on them
  else e.barrier_sync();
  core::ir::tcgen05_fence(e, false);
  Value tmem = core::ir::tmem_address(e, tmem_slot);

  Value cta_rank = pair ? core::ir::cluster_cta_rank(e) : zero;
  Value is_leader = e.eq(cta_rank, zero);
  TileWalk walk(e, walk_shape(c), M, N, e.block_idx(0), e.grid_dim(0), cta_rank, minor_is_n, band_width);
  Value k_iters = e.ceil_div(K, e.c32(c.tile_k));
  Value pair_mask = pair ? mlir::arith::ConstantIntOp::create(e.b, e.loc, 0b11, 16).getResult() : Value();

  // ---- warp 0: TMA producer.
  e.if_then(e.eq(warp, zero), [&] {
    e.if_then(core::ir::elect_one(e), [&] {
      core::ir::tma_prefetch_descriptor(e, desc_a);
      core::ir::tma_prefetch_descriptor(e, desc_b);
      core::ir::tma_prefetch_descriptor(e, desc_c);
      e.for_loop(zero, walk.count(), one, {}, [&](Value iter, mlir::ValueRange) {
        auto [m0, n0] = walk.origin(e, iter);
        Value b0 = e.add(n0, e.mul(cta_rank, e.c32(c.tile_n)));  // this CTA's half of the pair's B
        e.for_loop(zero, k_iters, one, {}, [&](Value k, mlir::ValueRange) {
          Value step = e.add(e.mul(iter, k_iters), k);
          e.if_then(e.ult(e.c32(S - 1), step), [&] { empty.wait_step(e, e.sub(step, e.c32(S))); });
          core::ir::SlotPhase sp = BarrierRing::slot_phase(e, step, S);
          Value bar = full.slot_ptr(e, sp.slot);
          if (pair) {
            // Both CTAs' bytes complete on the leader's barrier; only the leader expects them.
            e.if_then(is_leader, [&] { full.arrive_expect_tx(e, sp.slot, 2 * (a_stage + b_stage)); });
            bar = core::ir::pair_leader_address(e, bar);
          } else {
            full.arrive_expect_tx(e, sp.slot, a_stage + b_stage);
          }
          Value k0 = e.mul(k, e.c32(c.tile_k));
          auto stage = [&](const char* name, std::int64_t bytes) {
            return e.smem_offset(smem, e.add(e.c32(plan.region(name).offset), e.mul(sp.slot, e.c32(bytes))));
          };
          emit_stage_load(e, {desc_a, la, stage("a", a_stage), bar, m0, k0, Value(), Value(), pair});
          if (b_k_major) emit_stage_load(e, {desc_b, lb, stage("b", b_stage), bar, b0, k0, Value(), Value(), pair});
          else emit_stage_load(e, {desc_b, lb, stage("b", b_stage), bar, k0, b0, Value(), Value(), pair});
          return Values{};
        });
        return Values{};
      });
    });
  });

  // ---- warp 1 of the leader CTA: the MMA issuer.
  e.if_then(e.eq(warp, one), [&] {
    e.if_then(is_leader, [&] {
      e.if_then(core::ir::elect_one(e), [&] {
        Value idesc = e.c32(core::ir::tcgen05_instr_descriptor(c.mma_m(), c.mma_n(), mma_input(p.in_dtype), false,
                                                               !b_k_major));
        e.for_loop(zero, walk.count(), one, {}, [&](Value iter, mlir::ValueRange) {
          core::ir::SlotPhase acc = BarrierRing::slot_phase(e, iter, 2);
          // The epilogue(s) must have drained this accumulator buffer two tiles ago.
          e.if_then(e.ult(one, iter), [&] { acc_empty.wait_step(e, e.sub(iter, e.c32(2))); });
          core::ir::tcgen05_fence(e, false);
          Value d = core::ir::tmem_offset(e, tmem, zero, e.mul(acc.slot, e.c32(c.mma_n())));
          e.for_loop(zero, k_iters, one, {}, [&](Value k, mlir::ValueRange) {
            Value step = e.add(e.mul(iter, k_iters), k);
            core::ir::SlotPhase sp = BarrierRing::slot_phase(e, step, S);
            full.wait(e, sp.slot, sp.parity);
            core::ir::tcgen05_fence(e, false);
            Value a_base = e.add(e.c32(plan.region("a").offset), e.mul(sp.slot, e.c32(a_stage)));
            Value b_base = e.add(e.c32(plan.region("b").offset), e.mul(sp.slot, e.c32(b_stage)));
            for (int kk = 0; kk < c.tile_k / 16; ++kk) {
              int kbytes = kk * 16 * in, atom = kbytes / swz, in_atom = kbytes % swz;
              Value da = core::ir::tcgen05_smem_descriptor(
                  e, e.smem_offset(smem, e.add(a_base, e.c32(std::int64_t(atom) * c.tile_m * swz + in_atom))),
                  swizzle_of(swz), 16, 8 * swz);
              Value db = b_k_major
                             ? core::ir::tcgen05_smem_descriptor(
                                   e, e.smem_offset(smem, e.add(b_base, e.c32(std::int64_t(atom) * c.tile_n * swz + in_atom))),
                                   swizzle_of(swz), 16, 8 * swz)
                             // N-major: atoms of 128 bytes of N, tile_k rows each; a k16 step is 16 rows.
                             : core::ir::tcgen05_smem_descriptor(e, e.smem_offset(smem, e.add(b_base, e.c32(kk * 16 * 128))),
                                                                 Swizzle::B128, c.tile_k * 128, 1024);
              Value accumulate = kk > 0 ? mlir::arith::ConstantIntOp::create(e.b, e.loc, 1, 1).getResult()
                                        : e.ult(zero, k);
              core::ir::tcgen05_mma(e, d, da, db, idesc, accumulate, pair);
            }
            // The stage is free (in both CTAs) once these MMAs have read it.
            core::ir::tcgen05_commit(e, empty.slot_ptr(e, sp.slot), pair_mask, pair);
            return Values{};
          });
          core::ir::tcgen05_commit(e, acc_full.slot_ptr(e, acc.slot), pair_mask, pair);
          return Values{};
        });
      });
    });
  });

  // ---- warpgroup 1: the epilogue, one TMEM lane (output row) per thread.
  e.if_then(e.eq(e.warpgroup_idx(), one), [&] {
    Value local = e.rem(tid, e.c32(128));
    Value lane_base = e.mul(e.rem(warp, e.c32(4)), e.c32(32));  // the 32 lanes this warp may read
    Value row = local;
    Value leader = e.eq(local, zero);
    Value epi = region("epilogue");
    const int pieces = c.mma_n() / c.epilogue_tile_n;
    e.for_loop(zero, walk.count(), one, {}, [&](Value iter, mlir::ValueRange) {
      auto [m0, n0] = walk.origin(e, iter);
      core::ir::SlotPhase acc = BarrierRing::slot_phase(e, iter, 2);
      acc_full.wait(e, acc.slot, acc.parity);
      core::ir::tcgen05_fence(e, false);
      for (int piece = 0; piece < pieces; ++piece) {
        // The two buffers alternate over the CTA's whole sequence of pieces, not within a tile:
        // with an odd number of pieces per tile, restarting at buffer 0 each tile overwrote the
        // buffer the previous tile's last TMA store still read (found by the virtual device,
        // 'verify matmul --arch sm_100a --all': 880 of 5280 verifications).
        Value parity = e.rem(e.add(e.mul(iter, e.c32(pieces)), e.c32(piece)), e.c32(2));
        Value buffer = e.smem_offset(epi, e.mul(parity, e.c32(piece_bytes)));
        // The store that last read this buffer (two pieces ago) is done reading it.
        e.if_then(leader, [&] { core::ir::tma_store_wait(e, 1, /*read_only=*/true); });
        e.named_barrier(kEpilogueBarrier, 128);
        Value cols = e.add(e.mul(acc.slot, e.c32(c.mma_n())), e.c32(piece * c.epilogue_tile_n));
        emit_epilogue_piece(e, p, c, core::ir::tmem_offset(e, tmem, lane_base, cols), buffer, row);
        core::ir::fence_proxy_async_shared(e);
        e.named_barrier(kEpilogueBarrier, 128);
        e.if_then(leader, [&] {
          for (int a = 0; a < c.epilogue_tile_n * out / atom_bytes; ++a) {
            Value col = e.add(n0, e.c32(piece * c.epilogue_tile_n + a * atom_elems));
            core::ir::tma_store(e, desc_c, e.smem_offset(buffer, std::int64_t(a) * c.tile_m * atom_bytes), {col, m0});
          }
          core::ir::tma_store_commit(e);
        });
      }
      // Every thread's TMEM loads completed (wait::ld) before the last barrier: free the buffer.
      core::ir::tcgen05_fence(e, true);
      e.if_then(leader, [&] {
        if (pair) acc_empty.arrive_remote(e, acc.slot, zero, core::ir::BarrierRing::Order::Release);
        else acc_empty.arrive(e, acc.slot);
      });
      return Values{};
    });
    e.if_then(leader, [&] { core::ir::tma_store_wait(e, 0, false); });
  });

  // TMEM is freed once no MMA can write it and no epilogue reads it; no CTA of a pair leaves
  // while its peer may still signal its barriers.
  core::ir::tcgen05_fence(e, true);
  if (pair) core::ir::cluster_sync(e);
  else e.barrier_sync();
  core::ir::tcgen05_fence(e, false);
  e.if_then(e.eq(warp, one), [&] { core::ir::tmem_dealloc(e, tmem, c.tmem_alloc_columns(), pair); });

  core::BuiltKernel built;
  built.mlir = km.to_text();
  built.kernel_name = "matmul";
  built.block_threads = kThreads;
  built.cluster_size = c.cluster_size();
  built.dynamic_smem_bytes = static_cast<int>(plan.total_bytes());
  built.tensor_maps.push_back(operand_tensor_map(p.m, p.k, p.in_dtype, la.box_rows, la.atom_elems, swizzle_of(swz)));
  built.tensor_maps.push_back(b_k_major ? operand_tensor_map(p.n, p.k, p.in_dtype, lb.box_rows, lb.atom_elems, swizzle_of(swz))
                                        : operand_tensor_map(p.k, p.n, p.in_dtype, lb.box_rows, lb.atom_elems, Swizzle::B128));
  built.tensor_maps.push_back(operand_tensor_map(p.m, p.n, p.out_dtype, c.tile_m, atom_elems, swizzle_of(atom_bytes)));
  return built;
}

}  // namespace mgpu::kernels::sm100
