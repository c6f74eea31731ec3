#include "core/ir/barrier.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mgpu::core::ir {

using mlir::Value;

SlotPhase BarrierRing::slot_phase(Emitter& e, Value step, int depth) {
  Value d = e.c32(depth);
  return {e.rem(step, d), e.bit_and(e.div(step, d), e.c32(1))};
}

Value BarrierRing::slot_ptr(Emitter& e, Value slot) const { return e.smem_offset(base_, e.mul(slot, e.c32(8))); }

void BarrierRing::init(Emitter& e, int arrival_count) const {
  for (int i = 0; i < depth_; ++i)
    mlir::NVVM::MBarrierInitOp::create(e.b, e.loc, e.smem_offset(base_, 8 * i), e.c32(arrival_count), Value());
}

void BarrierRing::arrive(Emitter& e, Value slot) const {
  mlir::NVVM::MBarrierArriveOp::create(e.b, e.loc, mlir::Type(), slot_ptr(e, slot), Value());
}

void BarrierRing::arrive_remote(Emitter& e, Value slot, Value cta_rank, Order order) const {
  auto cluster_ptr = mlir::LLVM::LLVMPointerType::get(e.b.getContext(), 7);
  Value remote = mlir::NVVM::MapaOp::create(e.b, e.loc, cluster_ptr, slot_ptr(e, slot), cta_rank);
  mlir::NVVM::MBarrierArriveOp::create(e.b, e.loc, mlir::Type(), remote, Value(), mlir::NVVM::MemScopeKind::CLUSTER,
                                       order == Order::Relaxed);
}

void BarrierRing::arrive_expect_tx(Emitter& e, Value slot, std::int64_t bytes) const {
  mlir::NVVM::MBarrierArriveExpectTxOp::create(e.b, e.loc, mlir::Type(), slot_ptr(e, slot), e.c32(bytes),
                                               mlir::NVVM::MemScopeKind::CTA, false, Value());
}

void BarrierRing::wait(Emitter& e, Value slot, Value parity) const {
  // try_wait.parity with a suspend-time hint, retried in a loop by the lowering.
  mlir::NVVM::MBarrierTryWaitParityOp::create(e.b, e.loc, slot_ptr(e, slot), parity, e.c32(0x989680));
}

void BarrierRing::wait_step(Emitter& e, Value step) const {
  SlotPhase sp = slot_phase(e, step, depth_);
  wait(e, sp.slot, sp.parity);
}

Value pair_leader_address(Emitter& e, Value smem_ptr) {
  Value raw = mlir::LLVM::PtrToIntOp::create(e.b, e.loc, e.i64(), smem_ptr);
  Value masked = mlir::arith::AndIOp::create(e.b, e.loc, raw, e.c64(~(std::int64_t(1) << 24)));
  return mlir::LLVM::IntToPtrOp::create(e.b, e.loc, smem_ptr.getType(), masked);
}

void fence_barrier_init(Emitter& e) { mlir::NVVM::FenceMbarrierInitOp::create(e.b, e.loc); }

}  // namespace mgpu::core::ir
