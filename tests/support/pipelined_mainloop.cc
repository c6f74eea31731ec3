#include "tests/support/pipelined_mainloop.h"

#include "core/ir/barrier.h"
#include "core/ir/kernel_module.h"
#include "core/ir/roles.h"
#include "core/ir/smem_plan.h"
#include "core/ir/tma.h"
#include "core/ir/wgmma.h"
#include "core/mlir_context.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"

namespace mgpu::testing {

using namespace mgpu::core::ir;
using mlir::Value;

std::string pipelined_mainloop_mlir(int tile_n, int stages, int k_steps) {
  constexpr int kTileM = 128, kTileK = 64, kBytes = 2;
  auto ctx = mgpu::core::make_mlir_context();
  KernelModule km(*ctx, "mainloop");
  mlir::OpBuilder probe(ctx.get());
  mlir::Type ptr = Emitter{probe, probe.getUnknownLoc()}.global_ptr_type();
  KernelBody kb = km.add_kernel("mainloop", {ptr, ptr, ptr}, 384);
  Emitter& e = kb.e;
  Value desc_a = kb.args[0], desc_b = kb.args[1], out = kb.args[2];

  const int a_bytes = kTileM * kTileK * kBytes, b_bytes = tile_n * kTileK * kBytes;
  SmemPlan plan;
  int64_t a_off = plan.alloc("a", int64_t(a_bytes) * stages, 1024);
  int64_t b_off = plan.alloc("b", int64_t(b_bytes) * stages, 1024);
  int64_t full_off = plan.alloc("full", BarrierRing::bytes(stages), 8);
  int64_t empty_off = plan.alloc("empty", BarrierRing::bytes(stages), 8);
  Value smem = km.dynamic_smem(e);
  BarrierRing full(e.smem_offset(smem, full_off), stages), empty(e.smem_offset(smem, empty_off), stages);

  e.if_then(e.eq(e.thread_idx(), e.c32(0)), [&] {
    full.init(e, 1);
    empty.init(e, 2);  // one arrival per consumer warpgroup
    fence_barrier_init(e);
  });
  e.barrier_sync();
  Value wg = e.warpgroup_idx();
  Value zero = e.c32(0), one = e.c32(1), ks = e.c32(k_steps);

  e.if_then(e.eq(wg, zero), [&] {  // producer
    setmaxnreg(e, 40, false);
    e.if_then(elect_one(e), [&] {
      e.if_then(e.eq(e.warp_idx(), zero), [&] {
        e.for_loop(zero, ks, one, {}, [&](Value k, mlir::ValueRange) {
          e.if_then(e.ult(e.c32(stages - 1), k), [&] { empty.wait_step(e, e.sub(k, e.c32(stages))); });
          SlotPhase sp = BarrierRing::slot_phase(e, k, stages);
          full.arrive_expect_tx(e, sp.slot, a_bytes + b_bytes);
          Value a_dst = e.smem_offset(e.smem_offset(smem, a_off), e.mul(sp.slot, e.c32(a_bytes)));
          Value b_dst = e.smem_offset(e.smem_offset(smem, b_off), e.mul(sp.slot, e.c32(b_bytes)));
          Value kk = e.mul(k, e.c32(kTileK));
          tma_load(e, desc_a, a_dst, full.slot_ptr(e, sp.slot), {kk, e.mul(e.block_idx(1), e.c32(kTileM))});
          tma_load(e, desc_b, b_dst, full.slot_ptr(e, sp.slot), {kk, e.mul(e.block_idx(0), e.c32(tile_n))});
          return llvm::SmallVector<Value>{};
        });
      });
    });
  });

  e.if_then(e.ult(zero, wg), [&] {  // consumers: warpgroup 1 takes rows 0-63, 2 rows 64-127
    setmaxnreg(e, 232, true);
    Value row_half = e.sub(wg, one);
    Value acc0 = wgmma_zero_accumulator(e, tile_n);
    auto done = e.for_loop(zero, ks, one, {acc0}, [&](Value k, mlir::ValueRange carried) {
      SlotPhase sp = BarrierRing::slot_phase(e, k, stages);
      full.wait(e, sp.slot, sp.parity);
      Value a = e.smem_offset(e.smem_offset(smem, a_off),
                              e.add(e.mul(sp.slot, e.c32(a_bytes)), e.mul(row_half, e.c32(a_bytes / 2))));
      Value b = e.smem_offset(e.smem_offset(smem, b_off), e.mul(sp.slot, e.c32(b_bytes)));
      Value acc = carried[0];
      wgmma_fence(e);
      for (int kk = 0; kk < kTileK / 16; ++kk) {
        Value da = smem_descriptor(e, e.smem_offset(a, 32 * kk), Swizzle::B128, 16, 1024);
        Value db = smem_descriptor(e, e.smem_offset(b, 32 * kk), Swizzle::B128, 16, 1024);
        acc = wgmma(e, acc, da, db, tile_n, MmaInput::BF16, true, true);
      }
      wgmma_commit(e);
      wgmma_wait(e, 0);
      e.if_then(e.eq(e.rem(e.thread_idx(), e.c32(128)), zero), [&] { empty.arrive(e, sp.slot); });
      return llvm::SmallVector<Value>{acc};
    });
    // Each thread writes its N/2 accumulators to a private stripe of `out`.
    Value base = e.mul(e.thread_idx(), e.c32(tile_n / 2));
    for (int i = 0; i < tile_n / 2; ++i) {
      Value v = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, done[0], i);
      Value p = mlir::LLVM::GEPOp::create(e.b, e.loc, e.global_ptr_type(), e.b.getF32Type(), out,
                                          llvm::ArrayRef<mlir::LLVM::GEPArg>{e.add(base, e.c32(i))});
      mlir::LLVM::StoreOp::create(e.b, e.loc, v, p);
    }
  });
  return km.to_text();
}

}  // namespace mgpu::testing
