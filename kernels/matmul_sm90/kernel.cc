#include "kernels/matmul_sm90/kernel.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ir/barrier.h"
#include "core/ir/global_memory.h"
#include "core/ir/kernel_module.h"
#include "core/ir/roles.h"
#include "core/ir/tma.h"
#include "core/ir/wgmma.h"
#include "core/mlir_context.h"
#include "kernels/matmul_common/operand_tma.h"
#include "kernels/matmul_common/tile_walk.h"
#include "kernels/matmul_sm90/validity.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

namespace mgpu::kernels::sm90 {
namespace {

using core::ir::BarrierRing;
using core::ir::Emitter;
using core::ir::Swizzle;
using mlir::Value;
using Values = llvm::SmallVector<Value>;

constexpr int kProducerRegisters = 40;   // the TMA warpgroup needs few
constexpr int kConsumerRegisters = 232;  // 128 x 40 + 256 x 232 <= 64K registers per SM

// Everything the builder derives from (problem, config), computed once.
struct Geometry {
  MatmulConfig c;
  int in = 2, out = 2;
  int cm = 0, cn = 0;           // CTA tile
  int swz = 128;                // K-major swizzle span (bytes) for A and an N x K B
  int k_atoms = 1;              // swizzle atoms along K in a stage (tile_k * in / swz)
  bool b_k_major = true;        // B given as N x K
  int b_atoms = 1;              // N-major B: 128-byte atoms along N in a stage
  std::int64_t a_stage = 0, b_stage = 0;
  std::int64_t a_off = 0, b_off = 0, epi_off = 0, full_off = 0, empty_off = 0, ticket_off = 0;
  int smem_total = 0;
  bool clustered = false;
  bool shares_b = false;        // cluster along M: B is multicast; along N: A is
};

Geometry geometry(const MatmulProblem& p, const MatmulConfig& c) {
  Geometry g;
  g.c = c;
  g.in = size_in_bytes(p.in_dtype);
  g.out = size_in_bytes(p.out_dtype);
  g.cm = c.cta_tile_m();
  g.cn = c.cta_tile_n();
  g.swz = k_swizzle_bytes(p.in_dtype, c.tile_k);
  g.k_atoms = c.tile_k * g.in / g.swz;
  g.b_k_major = p.b_layout == BLayout::NK;
  g.b_atoms = g.cn * g.in / 128;
  g.a_stage = a_stage_bytes(p, c);
  g.b_stage = b_stage_bytes(p, c);
  core::ir::SmemPlan plan = smem_plan(p, c);
  g.a_off = plan.region("a").offset;
  g.b_off = plan.region("b").offset;
  g.epi_off = plan.region("epilogue").offset;
  g.full_off = plan.region("full").offset;
  g.empty_off = plan.region("empty").offset;
  if (c.reduces()) g.ticket_off = plan.region("ticket").offset;
  g.smem_total = static_cast<int>(plan.total_bytes());
  g.clustered = c.cluster_dimension != ClusterDim::None;
  g.shares_b = c.cluster_dimension == ClusterDim::M;
  return g;
}

}  // namespace

TileWalkShape walk_shape(const MatmulProblem& p, const MatmulConfig& c) {
  return {c.cta_tile_m(), c.cta_tile_n(), c.cluster_dimension == ClusterDim::M ? 2 : 1,
          c.cluster_dimension == ClusterDim::N ? 2 : 1, effective_split_k(p, c), c.schedule == Schedule::StreamK,
          (p.k + c.tile_k - 1) / c.tile_k};
}

unsigned persistent_grid(const MatmulProblem& p, const MatmulConfig& c, int sm_count) {
  const mgpu_lm_matmul l = launch_consts(c);
  return mgpu_lm_grid(&l, p.m, p.n, p.k, sm_count);
}

BuiltMatmul build_matmul(const MatmulProblem& p, const MatmulConfig& cfg, const core::ArchSpec& arch) {
  check_problem(p);
  if (auto r = why_invalid(p, cfg, arch))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
  return build_matmul_unchecked(p, cfg);
}

BuiltMatmul build_matmul_unchecked(const MatmulProblem& p, const MatmulConfig& cfg, const FaultyVariant& faulty) {
  // Not a kernel with a defect but no kernel: a pingpong warpgroup skips the other's units, so
  // it cannot carry split ranges' ring positions, and partials are slotted per cooperating one.
  if (cfg.pingpong() && cfg.reduces())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("pingpong consumers with {} are not built", to_string(cfg.schedule)));
  const Geometry g = geometry(p, cfg);
  const MatmulConfig& c = g.c;
  const int S = c.max_concurrent_steps;
  const bool a_multicast = g.clustered && !g.shares_b, b_multicast = g.clustered && g.shares_b;
  const OperandLoads la = plan_loads(g.cm, g.k_atoms, g.swz, g.in, a_multicast);
  const OperandLoads lb = g.b_k_major ? plan_loads(g.cn, g.k_atoms, g.swz, g.in, b_multicast)
                                      : plan_loads(c.tile_k, g.b_atoms, 128, g.in, b_multicast);

  auto ctx = core::make_mlir_context();
  core::ir::KernelModule km(*ctx, "matmul_sm90");
  mlir::OpBuilder probe(ctx.get());
  Emitter tmp{probe, probe.getUnknownLoc()};
  mlir::Type ptr = tmp.global_ptr_type(), i32 = tmp.i32();
  // split_k and stream_k add the workspace pointer after the descriptors; split_k the split
  // count at the end. (One binary for both, the walk chosen at run time, kept 64-bit stream
  // values live beside the split kernel's accumulators: ptxas spilled 20-52 bytes at 64 x 128.)
  const bool split = c.reduces();
  const bool stream = c.schedule == Schedule::StreamK;
  llvm::SmallVector<mlir::Type> arg_types = {ptr, ptr, ptr};
  if (split) arg_types.push_back(ptr);
  arg_types.append(5, i32);
  if (split && !stream) arg_types.push_back(i32);
  core::ir::KernelBody kb = km.add_kernel("matmul", arg_types, 384);
  Emitter& e = kb.e;
  int arg = 0;
  Value desc_a = kb.args[arg++], desc_b = kb.args[arg++], desc_c = kb.args[arg++];
  Value workspace = split ? kb.args[arg++] : Value();
  Value M = kb.args[arg++], N = kb.args[arg++], K = kb.args[arg++], minor_is_n = kb.args[arg++];
  Value band_width = kb.args[arg++];
  Value splits = split && !stream ? kb.args[arg++] : Value();

  Value smem = km.dynamic_smem(e);
  BarrierRing full(e.smem_offset(smem, g.full_off), S), empty(e.smem_offset(smem, g.empty_off), S);
  Value zero = e.c32(0), one = e.c32(1);
  Value tid = e.thread_idx();

  e.if_then(e.eq(tid, zero), [&] {
    full.init(e, 1);
    // One arrival per consumer warp (4 per warpgroup, 2 warpgroups) of each CTA of the cluster:
    // wgmma.wait_group speaks for the warp that executes it only (PTX ISA 9.7.15.8), so a stage
    // is free when every warp reading it has retired its MMAs -- one thread per warpgroup
    // arriving after its own warp's wait released the stage under the other three warps'
    // MMAs (found by the virtual device).
    // (pingpong: a stage is read by the one warpgroup whose tile it belongs to: 4 warps.)
    empty.init(e, (c.pingpong() ? 4 : 8) * c.cluster_size());
    core::ir::fence_barrier_init(e);
  });
  if (g.clustered) core::ir::cluster_sync(e);  // peers' barriers exist before any multicast
  else e.barrier_sync();

  // The tile walk producer and consumers share, computed by each role after its setmaxnreg:
  // a value live across the register reallocation goes to local memory (the SASS of a
  // 192x128 clustered config showed one STL before the producer's dealloc and LDLs after it).
  const int cs = c.cluster_size();
  Value cta_rank, my_tiles, k_iters;
  std::optional<TileWalk> walk;
  auto start_role = [&] {
    // (The order of these ops is kept as it was before stream-K: the data-parallel and split
    // kernels' PTX, and so their verifications, stay the same.)
    cta_rank = g.clustered ? core::ir::cluster_cta_rank(e) : zero;
    if (stream) k_iters = e.ceil_div(K, e.c32(c.tile_k));
    walk.emplace(e, walk_shape(p, c), M, N, e.block_idx(0), e.grid_dim(0), cta_rank, minor_is_n, band_width, splits,
                 stream ? k_iters : Value());
    my_tiles = walk->count();
    if (!stream) k_iters = e.ceil_div(K, e.c32(c.tile_k));
  };
  // A work unit's k-steps: all of them, with split_k range s of S the steps
  // [s k_iters / S, (s + 1) k_iters / S), or a stream_k share (TileWalk) -- never empty, as the
  // validity rules keep S <= k_iters and the stream_k grid at most its iterations.
  struct KRange {
    Value first, count;
  };
  auto k_range = [&](const WorkUnit& u) -> KRange {
    if (stream) return {u.k_first, u.k_count};
    if (!split) return {zero, k_iters};
    Value lo = e.div(e.mul(u.split, k_iters), splits);
    Value hi = e.div(e.mul(e.add(u.split, one), k_iters), splits);
    return {lo, e.sub(hi, lo)};
  };
  // The ring position of a unit's first k-step: units of one CTA follow each other in the
  // stage ring. With equal ranges it is iter x k_iters; split ranges differ by one step, so
  // the producer and the consumers carry the count through their unit loops instead.
  auto carried_init = [&] { return split ? Values{zero} : Values{}; };
  auto unit_base = [&](Value iter, mlir::ValueRange carried) { return split ? carried.back() : e.mul(iter, k_iters); };

  Value wg = e.warpgroup_idx();

  // ---- producer: warpgroup 0, one thread issues every TMA load.
  e.if_then(e.eq(wg, zero), [&] {
    core::ir::setmaxnreg(e, kProducerRegisters, false);
    start_role();
    e.if_then(e.eq(e.warp_idx(), zero), [&] {
      e.if_then(core::ir::elect_one(e), [&] {
        core::ir::tma_prefetch_descriptor(e, desc_a);
        core::ir::tma_prefetch_descriptor(e, desc_b);
        core::ir::tma_prefetch_descriptor(e, desc_c);
        Value mask = g.clustered ? mlir::arith::ConstantIntOp::create(e.b, e.loc, 0b11, 16).getResult() : Value();
        e.for_loop(zero, my_tiles, one, carried_init(), [&](Value iter, mlir::ValueRange carried) {
          const WorkUnit u = walk->unit(e, iter);
          Value m0 = u.m0, n0 = u.n0, base = unit_base(iter, carried);
          const KRange kr = k_range(u);
          e.for_loop(zero, kr.count, one, {}, [&](Value k, mlir::ValueRange) {
            Value step = e.add(base, k);
            e.if_then(e.ult(e.c32(S - 1), step), [&] { empty.wait_step(e, e.sub(step, e.c32(S))); });
            core::ir::SlotPhase sp = BarrierRing::slot_phase(e, step, S);
            full.arrive_expect_tx(e, sp.slot, g.a_stage + g.b_stage);
            Value bar = full.slot_ptr(e, sp.slot);
            Value k0 = e.mul(e.add(kr.first, k), e.c32(c.tile_k));
            auto load = [&](Value desc, const OperandLoads& l, std::int64_t region, std::int64_t stage_bytes,
                            bool multicast, Value outer0, Value inner0) {
              Value stage = e.smem_offset(smem, e.add(e.c32(region), e.mul(sp.slot, e.c32(stage_bytes))));
              emit_stage_load(e, {desc, l, stage, bar, outer0, inner0, multicast ? cta_rank : Value(),
                                  multicast ? mask : Value(), false});
            };
            load(desc_a, la, g.a_off, g.a_stage, a_multicast, m0, k0);
            if (g.b_k_major) load(desc_b, lb, g.b_off, g.b_stage, b_multicast, n0, k0);
            else load(desc_b, lb, g.b_off, g.b_stage, b_multicast, k0, n0);  // rows are K, atoms along N
            return Values{};
          });
          return split ? Values{e.add(base, kr.count)} : Values{};
        });
      });
    });
  });

  // ---- consumers: warpgroups 1 and 2.
  e.if_then(e.ult(zero, wg), [&] {
    core::ir::setmaxnreg(e, kConsumerRegisters, true);
    start_role();
    Value cw = e.sub(wg, one);                 // 0 or 1
    Value local = e.rem(tid, e.c32(128));
    Value warp = e.div(local, e.c32(32)), lane = e.rem(local, e.c32(32));
    Value leader = e.eq(local, zero);
    // The warpgroup's place inside the CTA tile (pingpong: the whole tile).
    Value wg_row = !c.pingpong() && c.wg_dimension == Dim::M ? e.mul(cw, e.c32(c.tile_m)) : zero;
    Value wg_col = !c.pingpong() && c.wg_dimension == Dim::N ? e.mul(cw, e.c32(c.tile_n)) : zero;
    const int mblocks = c.mma_blocks();  // 64-row wgmma blocks per warpgroup (of C, or of C^T with swap_ab)
    Value peer = g.clustered ? e.bit_and(e.add(cta_rank, one), one) : Value();

    // The stage was read by this warp's wgmma only, and wgmma.wait_group has retired those MMAs:
    // the arrival hands over no pending access, so the peer's is relaxed. A .release.cluster
    // arrival compiled to MEMBAR.ALL.GPU in the k-loop, and on the H100 2-CTA clusters ran at
    // 0.6x the unclustered kernel with warps stalled on that membar (ncu, README).
    auto release = [&](Value step) {
      e.if_then(e.eq(lane, zero), [&] {
        Value slot = BarrierRing::slot_phase(e, step, S).slot;
        empty.arrive(e, slot);
        if (g.clustered) empty.arrive_remote(e, slot, peer, BarrierRing::Order::Relaxed);
      });
    };

    // Epilogue staging (PTX ISA 5.5.5, "Tensor copy swizzling modes"): in an atom of W-byte rows
    // the TMA store reads 16-byte chunk c of row `row` from chunk c ^ ((row * W >> 7) & (W/16 - 1)).
    // A fragment store covers rows r = lane / 4 (+ multiples of 8, which do not change the XOR),
    // 4 lanes per row, so the XOR is a per-lane constant. With 2-byte outputs each lane writes 4
    // bytes of chunk j: the 8 rows land in 8 distinct chunks of a 128-byte line, 32 banks. With
    // f32 each lane writes 8 bytes (half a warp per wavefront, rows r..r+3) and a group is a chunk
    // pair, which the XOR's lowest bit only permutes within itself, so two rows would collide;
    // there, the lanes of every other row pair write group j ^ d in slot j (their own data for
    // that group), which moves them to the other pair (d = 2 for 128-byte rows, 1 for 64).
    const int W = epilogue_atom_bytes(p, c);
    Value r = e.div(lane, e.c32(4)), q = e.rem(lane, e.c32(4));
    Value sw = e.bit_and(e.div(e.mul(r, e.c32(W)), e.c32(128)), e.c32(W / 16 - 1));
    const int swap_d = g.out == 4 ? (W == 128 ? 2 : W == 64 ? 1 : 0) : 0;
    Value swap = swap_d == 0 ? Value()
                             : e.ult(zero, e.bit_and(r, e.c32(W == 128 ? 1 : 2)));  // odd rows / odd row pairs
    Value lane_chunk_xor = sw, lane_in_chunk = e.mul(q, e.c32(4));
    if (g.out == 4) {
      Value half_q = e.div(q, e.c32(2));  // which chunk of the group's pair the lane's 8 bytes are in
      lane_chunk_xor = e.bit_xor(sw, half_q);
      if (swap) lane_chunk_xor = e.bit_xor(lane_chunk_xor, e.select(swap, e.c32(2 * swap_d), zero));
      lane_in_chunk = e.mul(e.rem(q, e.c32(2)), e.c32(8));
    }
    Value lane_row = e.add(e.mul(warp, e.c32(16)), r);

    // One k-step of tile `iter`: wait for its stage, issue its MMAs (the tile's first k-step
    // with scale-d = 0: no zeroed accumulator), commit, and retire the previous step's MMAs,
    // freeing its stage (`tile_first`: the step is issued ahead, before the previous tile's
    // epilogue; its stage is freed by the next step).
    auto k_step = [&](Value base, Value k, Values acc, bool tile_first) {
      Value step = e.add(base, k);
      core::ir::SlotPhase sp = BarrierRing::slot_phase(e, step, S);
      full.wait(e, sp.slot, sp.parity);
      Value a_stage = e.add(e.c32(g.a_off), e.mul(sp.slot, e.c32(g.a_stage)));
      Value b_stage = e.add(e.c32(g.b_off), e.mul(sp.slot, e.c32(g.b_stage)));
      core::ir::wgmma_fence(e);
      Value keep = mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getBoolAttr(true));
      Value accumulate = tile_first ? mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getBoolAttr(false)).getResult()
                                    : e.ult(zero, k);  // the tile's first k-step starts from A.B
      // One descriptor per operand and step, each MMA's a constant distance from it (one 64-bit
      // add each, as CUTLASS's descriptor iterators do): rebuilding every descriptor from its
      // address took about 40% of the k-loop's instructions (SASS beside Triton's, issue 19).
      Value a_base = core::ir::smem_descriptor(e, e.smem_offset(smem, e.add(a_stage, e.mul(wg_row, e.c32(g.swz)))),
                                               swizzle_of(g.swz), 16, 8 * g.swz);
      Value b_base = g.b_k_major
                         ? core::ir::smem_descriptor(e, e.smem_offset(smem, e.add(b_stage, e.mul(wg_col, e.c32(g.swz)))),
                                                     swizzle_of(g.swz), 16, 8 * g.swz)
                         // N-major: atoms of 64 N-columns, each tile_k rows of 128 bytes.
                         : core::ir::smem_descriptor(
                               e, e.smem_offset(smem, e.add(b_stage, e.mul(e.div(wg_col, e.c32(128 / g.in)),
                                                                           e.c32(c.tile_k * 128)))),
                               Swizzle::B128, c.tile_k * 128, 1024);
      for (int kk = 0; kk < c.tile_k / 16; ++kk) {
        int kbytes = kk * 16 * g.in;
        int atom = kbytes / g.swz, in_atom = kbytes % g.swz;
        // The k16 slice of each operand, and its 64-row block `blk` (wgmma's M side).
        auto a_slice = [&](int blk) {
          return core::ir::descriptor_advanced(e, a_base, std::int64_t(atom) * g.cm * g.swz + in_atom + blk * 64 * g.swz);
        };
        auto b_slice = [&](int blk) {
          return g.b_k_major ? core::ir::descriptor_advanced(e, b_base, std::int64_t(atom) * g.cn * g.swz + in_atom +
                                                                             blk * 64 * g.swz)
                             // a k16 step is 16 rows; the next 64 N-columns are the next atom
                             : core::ir::descriptor_advanced(e, b_base, kk * 16 * 128 + std::int64_t(blk) * c.tile_k * 128);
        };
        // Unswapped: wgmma's M is C's rows (A, K-major), its N C's columns (B). Swapped: its M
        // is C's columns (B, as given: K-major for N x K, MN-major -- "transposed" -- for K x N)
        // and its N is C's rows (A): the accumulator holds C^T.
        for (int mb = 0; mb < mblocks; ++mb)
          acc[mb] = c.swap_ab
                        ? core::ir::wgmma_scaled(e, acc[mb], b_slice(mb), a_slice(0), c.mma_n(), mma_input(p.in_dtype),
                                                 g.b_k_major, true, kk == 0 ? accumulate : keep)
                        : core::ir::wgmma_scaled(e, acc[mb], a_slice(mb), b_slice(0), c.mma_n(), mma_input(p.in_dtype),
                                                 true, g.b_k_major, kk == 0 ? accumulate : keep);
      }
      core::ir::wgmma_commit(e);
      core::ir::wgmma_wait(e, 1);  // the previous step's MMAs are done: its stage is free
      if (!tile_first) e.if_then(e.ult(zero, k), [&] { release(e.sub(step, one)); });
      return acc;
    };

    // The epilogue of one tile: pieces of epi_tile_m x epi_tile_n through this warpgroup's SMEM
    // buffer, kept as swizzled column atoms (above), one TMA store box per atom.
    auto epilogue = [&](const Values& accs, Value m0, Value n0) {
      const int EM = c.epi_tile_m, EN = c.epi_tile_n;
      const int groups_per_atom = W / (8 * g.out);  // 8-column fragment groups in an atom row
      Value buffer = e.smem_offset(smem, e.add(e.c32(g.epi_off), e.mul(cw, e.c32(std::int64_t(EM) * EN * g.out))));
      // Each warpgroup syncs its own epilogue (named barrier 1 or 2): its buffer, its stores and
      // its store waits are its own, so neither waits for the other's pieces (until 2026-11-23
      // one 256-thread barrier held both in step at every piece).
      Value epi_bar = e.add(cw, one);
      mlir::Type out_t = element_type(e, p.out_dtype);
      auto pair_t = mlir::VectorType::get({2}, out_t);
      for (int pm = 0; pm < c.tile_m / EM; ++pm)
        for (int pn = 0; pn < c.tile_n / EN; ++pn) {
          e.if_then(leader, [&] { core::ir::tma_store_wait(e, 0, /*read_only=*/true); });  // buffer free again
          e.named_barrier(epi_bar, 128);
          for (int mb = pm * EM / 64; mb < (pm + 1) * EM / 64; ++mb)
            for (int j = pn * EN / 8; j < (pn + 1) * EN / 8; ++j)
              for (int half = 0; half < 2; ++half) {  // rows r and r + 8 of the fragment
                const int jp = j - pn * EN / 8, atom = jp / groups_per_atom, jl = jp % groups_per_atom;
                Value pair = mlir::LLVM::UndefOp::create(e.b, e.loc, pair_t);
                for (int x = 0; x < 2; ++x) {
                  Value v = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, accs[mb], 4 * j + 2 * half + x);
                  if (swap) {  // this lane writes group j ^ d in slot j (above)
                    Value w = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, accs[mb], 4 * (j ^ swap_d) + 2 * half + x);
                    v = e.select(swap, w, v);
                  }
                  if (p.out_dtype != DType::F32) v = mlir::arith::TruncFOp::create(e.b, e.loc, out_t, v);
                  pair = mlir::LLVM::InsertElementOp::create(e.b, e.loc, pair, v, e.c32(x));
                }
                const int chunk = g.out == 2 ? jl : 2 * jl;  // the group's first 16-byte chunk in the row
                Value row = e.add(lane_row, e.c32(mb * 64 - pm * EM + 8 * half));
                Value off = e.add(e.add(e.c32(std::int64_t(atom) * EM * W), e.mul(row, e.c32(W))),
                                  e.add(e.mul(e.bit_xor(e.c32(chunk), lane_chunk_xor), e.c32(16)), lane_in_chunk));
                mlir::LLVM::StoreOp::create(e.b, e.loc, pair, e.smem_offset(buffer, off), 2 * g.out);
              }
          core::ir::fence_proxy_async_shared(e);
          e.named_barrier(epi_bar, 128);
          e.if_then(leader, [&] {
            Value col = e.add(e.add(n0, wg_col), e.c32(pn * EN));
            Value row = e.add(e.add(m0, wg_row), e.c32(pm * EM));
            for (int a = 0; a < EN * g.out / W; ++a)
              core::ir::tma_store(e, desc_c, e.smem_offset(buffer, e.c32(std::int64_t(a) * EM * W)),
                                  {e.add(col, e.c32(a * W / g.out)), row});
            core::ir::tma_store_commit(e);
          });
        }
    };

    // The epilogue of a swapped tile: the accumulator block mb holds C^T, rows n = mb * 64 +
    // warp * 16 + lane / 4 (+ 8) and columns m = 8 j + 2 (lane % 4) (+ 1) (PTX ISA 9.7.15.5.1,
    // the wgmma D fragment). A piece is the warpgroup's tile_m rows x epi_tile_n columns of C,
    // staged as the same swizzled column atoms as above, so each element goes to row m, column
    // n: one out-byte store each. For a fixed element of the fragment the 32 lanes write 8
    // consecutive columns (one 16-byte chunk at 2 bytes, two at 4) of 4 rows two apart, and the
    // swizzle XOR ((row * W) >> 7) & (W / 16 - 1) puts those rows in different chunks, so the
    // stores do not share banks.
    auto epilogue_swapped = [&](const Values& accs, Value m0, Value n0) {
      const int PM = c.tile_m, EN = c.epi_tile_n;
      Value buffer = e.smem_offset(smem, e.add(e.c32(g.epi_off), e.mul(cw, e.c32(std::int64_t(PM) * EN * g.out))));
      Value epi_bar = e.add(cw, one);
      mlir::Type out_t = element_type(e, p.out_dtype);
      for (int pn = 0; pn < c.tile_n / EN; ++pn) {
        e.if_then(leader, [&] { core::ir::tma_store_wait(e, 0, /*read_only=*/true); });  // buffer free again
        e.named_barrier(epi_bar, 128);
        for (int mb = 0; mb < mblocks; ++mb) {
          // Which of this block's rows fall in the piece: all, none, or (epi_tile_n 32) the
          // rows of warps 0-1 or of warps 2-3.
          const int lo = pn * EN - mb * 64, hi = lo + EN;  // the piece's rows, relative to the block
          if (hi <= 0 || lo >= 64) continue;
          auto write_block = [&] {
            // Per lane, the address of its element (j, half, x) is a base per (half, x) plus
            // 8 j rows: 8 j leaves the swizzle XOR ((row * W) >> 7) & (W/16 - 1) unchanged for
            // every W (8 rows of W bytes are a multiple of 128 bytes times the XOR's period).
            Value base[2][2];
            for (int half = 0; half < 2; ++half) {
              Value col = e.sub(e.add(lane_row, e.c32(8 * half)), e.c32(lo));  // n in the piece
              Value byte = e.mul(col, e.c32(g.out));
              Value atom = e.div(byte, e.c32(W)), in_row = e.rem(byte, e.c32(W));
              Value chunk = e.div(in_row, e.c32(16)), within = e.rem(in_row, e.c32(16));
              for (int x = 0; x < 2; ++x) {
                Value row = e.add(e.mul(q, e.c32(2)), e.c32(x));  // m in the piece, less 8 j
                Value xr = e.bit_and(e.div(e.mul(row, e.c32(W)), e.c32(128)), e.c32(W / 16 - 1));
                base[half][x] = e.add(e.add(e.mul(atom, e.c32(std::int64_t(PM) * W)), e.mul(row, e.c32(W))),
                                      e.add(e.mul(e.bit_xor(chunk, xr), e.c32(16)), within));
              }
            }
            for (int j = 0; j < c.tile_m / 8; ++j)
              for (int half = 0; half < 2; ++half)
                for (int x = 0; x < 2; ++x) {
                  Value v = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, accs[mb], 4 * j + 2 * half + x);
                  if (p.out_dtype != DType::F32) v = mlir::arith::TruncFOp::create(e.b, e.loc, out_t, v);
                  Value off = e.add(base[half][x], e.c32(8 * j * W));
                  mlir::LLVM::StoreOp::create(e.b, e.loc, v, e.smem_offset(buffer, off), g.out);
                }
          };
          if (lo <= 0 && hi >= 64) write_block();
          else e.if_then(e.eq(e.div(warp, e.c32(2)), e.c32(lo / 32)), write_block);  // EN 32: half the warps
        }
        core::ir::fence_proxy_async_shared(e);
        e.named_barrier(epi_bar, 128);
        e.if_then(leader, [&] {
          Value col = e.add(e.add(n0, wg_col), e.c32(pn * EN));
          Value row = e.add(m0, wg_row);
          for (int a = 0; a < EN * g.out / W; ++a)
            core::ir::tma_store(e, desc_c, e.smem_offset(buffer, e.c32(std::int64_t(a) * PM * W)),
                                {e.add(col, e.c32(a * W / g.out)), row});
          core::ir::tma_store_commit(e);
        });
      }
    };
    auto store_tile = [&](const Values& accs, Value m0, Value n0) {
      if (c.swap_ab) epilogue_swapped(accs, m0, n0);
      else epilogue(accs, m0, n0);
    };

    // split_k / stream_k: the end of a unit. A unit that is its tile's only segment (a stream_k
    // CTA's whole tile) stores the tile as data_parallel does. Otherwise it stores its
    // warpgroup's f32 partial to its workspace slot, then the warpgroup's leader takes a ticket
    // on the (tile, warpgroup) counter; the segment that draws the last ticket sums the tile's
    // partials in segment order 0..n-1 -- its own read back like the others -- so the sum, and
    // the output, is the same whichever segment finished last (bitwise reproducible), then
    // stores the tile and sets the counter back to zero for the next launch.
    //   Ordering (PTX ISA, "Memory Consistency Model"): the partial stores are weak; bar.sync
    // orders the warpgroup's stores before its leader's atom.acq_rel.gpu, whose release the last
    // leader's acquire synchronizes with through the counter's chain of read-modify-writes
    // ("Release and Acquire Patterns"); a second bar.sync hands that to the warpgroup's loads.
    //   Layout: counters first (u32 per tile and warpgroup, counter_bytes rounded to 256), then
    // one 128 x R-float slot per (partial slot, warpgroup) (R: accumulator registers per thread;
    // the walk numbers the slots: WorkUnit::slot), float group g (4 registers) of thread t at
    // g x 2048 + t x 16 bytes: each warp's 16-byte stores cover 512 contiguous bytes. Offsets fit
    // i32: the workspace is at most 32 MiB.
    const int R = c.accumulator_registers();
    auto split_epilogue = [&](const Values& accs, const WorkUnit& u) {
      Value ws = core::ir::global(e, workspace);
      Value epi_bar = e.add(cw, one);
      Value counters_end = e.mul(e.ceil_div(e.mul(walk->tiles(), e.c32(8)), e.c32(256)), e.c32(256));
      auto slot = [&](Value j) {  // this thread's first float of the tile's j-th segment's slot
        Value index = e.add(e.mul(u.slot(e, j), e.c32(2)), cw);
        return core::ir::global_offset(e, ws, e.add(counters_end, e.add(e.mul(index, e.c32(512 * R)),
                                                                            e.mul(local, e.c32(16)))));
      };
      const int per_block = c.mma_n() / 2;  // f32 registers of one 64-row accumulator block
      auto vec_type = mlir::VectorType::get({4}, e.b.getF32Type());
      auto reduce = [&] {
        Value mine = slot(u.split);
        for (int gi = 0; gi < R / 4; ++gi) {
          Value v = mlir::LLVM::UndefOp::create(e.b, e.loc, vec_type);
          for (int x = 0; x < 4; ++x) {
            const int i = 4 * gi + x;
            Value f = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, accs[i / per_block], i % per_block);
            v = mlir::LLVM::InsertElementOp::create(e.b, e.loc, v, f, e.c32(x));
          }
          core::ir::store_f32x4(e, core::ir::global_offset(e, mine, e.c32(gi * 2048)), v);
        }
        e.named_barrier(epi_bar, 128);
        Value ticket_slot = e.smem_offset(smem, e.add(e.c32(g.ticket_off), e.mul(cw, e.c32(4))));
        Value counter = core::ir::global_offset(e, ws, e.mul(e.add(e.mul(u.tile, e.c32(2)), cw), e.c32(4)));
        e.if_then(leader, [&] { core::ir::store_shared_u32(e, ticket_slot, core::ir::atomic_add_acq_rel_gpu(e, counter, one)); });
        e.named_barrier(epi_bar, 128);
        Value ticket = core::ir::load_shared_u32(e, ticket_slot);
        e.if_then(e.eq(ticket, e.sub(u.segments, one)), [&] {
          auto load_range = [&](Value s, int gi) {
            return core::ir::load_f32x4(e, core::ir::global_offset(e, slot(s), e.c32(gi * 2048)));
          };
          // In chunks of kChunk float groups, each summed over the segments by its own loop: the
          // sums (R registers) stay live until the tile is stored, and only one chunk's loads
          // beside them (loading all R at once spilled 528 bytes at R = 128).
          constexpr int kChunk = 4;
          Values sums;
          for (int c0 = 0; c0 < R / 4; c0 += kChunk) {
            const int n = std::min(kChunk, R / 4 - c0);
            Values chunk;
            if (!faulty.sum_in_arrival_order) {
              for (int gi = c0; gi < c0 + n; ++gi) chunk.push_back(load_range(zero, gi));
              chunk = e.for_loop(one, u.segments, one, chunk, [&](Value s, mlir::ValueRange carried) {
                Values next;
                for (int x = 0; x < n; ++x)
                  next.push_back(mlir::arith::AddFOp::create(e.b, e.loc, carried[x], load_range(s, c0 + x)));
                return next;
              });
            } else {
              for (int gi = c0; gi < c0 + n; ++gi) chunk.push_back(load_range(u.split, gi));
              Value vzero = mlir::arith::ConstantOp::create(e.b, e.loc, mlir::DenseElementsAttr::get(
                                                                            vec_type, e.b.getF32FloatAttr(0.0f)));
              chunk = e.for_loop(zero, u.segments, one, chunk, [&](Value s, mlir::ValueRange carried) {
                Values next;
                for (int x = 0; x < n; ++x)
                  next.push_back(mlir::arith::AddFOp::create(
                      e.b, e.loc, carried[x], e.select(e.eq(s, u.split), vzero, load_range(s, c0 + x))));
                return next;
              });
            }
            sums.append(chunk.begin(), chunk.end());
          }
          Values total;
          for (int mb = 0; mb < mblocks; ++mb) {
            Value acc = mlir::LLVM::UndefOp::create(e.b, e.loc, core::ir::wgmma_accumulator_type(e, c.mma_n()));
            for (int j = 0; j < per_block; ++j) {
              const int i = mb * per_block + j;
              Value f = mlir::LLVM::ExtractElementOp::create(e.b, e.loc, sums[i / 4], e.c32(i % 4));
              acc = mlir::LLVM::InsertValueOp::create(e.b, e.loc, acc, f, j);
            }
            total.push_back(acc);
          }
          e.if_then(leader, [&] { core::ir::store_relaxed_gpu(e, counter, zero); });
          store_tile(total, u.m0, u.n0);
        });
      };
      // A split_k range is never its tile's only one; a stream_k tile inside one CTA's share
      // is, and skips the workspace.
      if (!stream) return reduce();
      e.if_then(e.eq(u.segments, one), [&] { store_tile(accs, u.m0, u.n0); });
      e.if_then(e.ult(one, u.segments), reduce);
    };
    auto finish_unit = [&](const Values& accs, const WorkUnit& u) {
      if (split) split_epilogue(accs, u);
      else store_tile(accs, u.m0, u.n0);
    };

    // The tile loop. When two accumulators fit the registers (overlaps_epilogue), tile i's first
    // k-step is issued before tile i-1's epilogue, which then runs beside those MMAs (wgmma is
    // asynchronous: the epilogue reads the finished accumulator while the tensor cores write
    // the next one); otherwise each tile's epilogue follows its own k-loop.
    auto undefined = [&] {
      Values v;
      for (int mb = 0; mb < mblocks; ++mb) v.push_back(core::ir::wgmma_undefined_accumulator(e, c.mma_n()));
      return v;
    };
    // The k-steps [from, count) of the unit whose first step is ring position `base`.
    auto k_loop = [&](Value base, Value count, Value from, Values init) {
      Values accs = e.for_loop(from, count, one, init, [&](Value k, mlir::ValueRange carried) {
        return k_step(base, k, Values(carried.begin(), carried.end()), false);
      });
      core::ir::wgmma_wait(e, 0);
      release(e.sub(e.add(base, count), one));
      return accs;
    };
    if (c.pingpong()) {
      // Pingpong: warpgroup cw computes units cw, cw + 2, ... (the producer loads every unit's
      // k-steps in walk order). Named barriers 3 and 4 pass the MMA turn: a warpgroup waits
      // (bar.sync) for its turn before each unit but the CTA's first, and once its unit's MMAs
      // are issued -- every one of its full-barrier waits done -- gives the turn to the other
      // (bar.arrive) if the other has a next unit, so every arrival meets a wait and their MMA
      // phases never overlap: one warpgroup's epilogue runs under the other's MMAs.
      //   The turn also keeps the full-barrier parities sound: a warpgroup skips the other's
      // units' k-steps in the ring, and a parity wait cannot tell a phase from the one two
      // before it; when it waits on a slot, the turn it was given says every earlier phase of
      // that slot completed (PTX ISA 9.7.13.15.16, mbarrier.test_wait/try_wait .parity).
      Value two = e.c32(2);
      Value my_turn = e.add(cw, e.c32(3)), their_turn = e.sub(e.c32(4), cw);
      e.for_loop(cw, my_tiles, two, {}, [&](Value iter, mlir::ValueRange) {
        const WorkUnit u = walk->unit(e, iter);
        const KRange kr = k_range(u);
        Value base = unit_base(iter, {});
        e.if_then(e.ult(zero, iter), [&] { e.named_barrier(my_turn, 256); });
        Values accs = e.for_loop(zero, kr.count, one, undefined(), [&](Value k, mlir::ValueRange carried) {
          return k_step(base, k, Values(carried.begin(), carried.end()), false);
        });
        e.if_then(e.ult(e.add(iter, one), my_tiles), [&] { e.named_barrier_arrive(their_turn, 256); });
        core::ir::wgmma_wait(e, 0);
        release(e.sub(e.add(base, kr.count), one));
        finish_unit(accs, u);
        return Values{};
      });
    } else if (!overlaps_epilogue(c)) {
      e.for_loop(zero, my_tiles, one, carried_init(), [&](Value iter, mlir::ValueRange carried) {
        const WorkUnit u = walk->unit(e, iter);
        const KRange kr = k_range(u);
        Value base = unit_base(iter, carried);
        finish_unit(k_loop(base, kr.count, zero, undefined()), u);
        return split ? Values{e.add(base, kr.count)} : Values{};
      });
    } else {
      Values init = undefined();
      init.append(carried_init());
      Values last = e.for_loop(zero, my_tiles, one, init, [&](Value iter, mlir::ValueRange carried) {
        const WorkUnit u = walk->unit(e, iter);
        const KRange kr = k_range(u);
        Value base = unit_base(iter, carried);
        Values previous(carried.begin(), carried.begin() + mblocks);
        Values first = k_step(base, zero, undefined(), true);  // in flight during the epilogue
        e.if_then(e.ult(zero, iter), [&] { finish_unit(previous, walk->unit(e, e.sub(iter, one))); });
        Values next = k_loop(base, kr.count, one, first);
        if (split) next.push_back(e.add(base, kr.count));
        return next;
      });
      last.resize(mblocks);
      e.if_then(e.ult(zero, my_tiles), [&] { finish_unit(last, walk->unit(e, e.sub(my_tiles, one))); });
    }
    e.if_then(leader, [&] { core::ir::tma_store_wait(e, 0, false); });
  });

  if (g.clustered) core::ir::cluster_sync(e);  // no CTA leaves while its peer may still signal it

  BuiltMatmul out;
  out.mlir = km.to_text();
  out.kernel_name = "matmul";
  out.block_threads = 384;
  out.cluster_size = cs;
  out.dynamic_smem_bytes = g.smem_total;
  out.takes_workspace = split;
  auto operand = [&](std::int64_t rows, std::int64_t cols, DType t, const OperandLoads& l, Swizzle swz) {
    return operand_tensor_map(rows, cols, t, l.box_rows, l.atom_elems, swz);
  };
  out.tensor_maps.push_back(operand(p.m, p.k, p.in_dtype, la, swizzle_of(g.swz)));
  out.tensor_maps.push_back(g.b_k_major ? operand(p.n, p.k, p.in_dtype, lb, swizzle_of(g.swz))
                                        : operand(p.k, p.n, p.in_dtype, lb, Swizzle::B128));
  const int W = epilogue_atom_bytes(p, c);
  out.tensor_maps.push_back(operand_tensor_map(p.m, p.n, p.out_dtype, c.epi_rows(), W / g.out, swizzle_of(W)));
  return out;
}

}  // namespace mgpu::kernels::sm90
