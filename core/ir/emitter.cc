#include "core/ir/emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mgpu::core::ir {

using mlir::Value;

mlir::Type Emitter::i1() const { return b.getI1Type(); }
mlir::Type Emitter::i32() const { return b.getI32Type(); }
mlir::Type Emitter::i64() const { return b.getI64Type(); }
mlir::Type Emitter::smem_ptr_type() const { return mlir::LLVM::LLVMPointerType::get(b.getContext(), 3); }
mlir::Type Emitter::global_ptr_type() const { return mlir::LLVM::LLVMPointerType::get(b.getContext()); }

Value Emitter::c32(int64_t v) { return mlir::arith::ConstantIntOp::create(b, loc, v, 32); }
Value Emitter::c64(int64_t v) { return mlir::arith::ConstantIntOp::create(b, loc, v, 64); }
Value Emitter::index(int64_t v) { return mlir::arith::ConstantIndexOp::create(b, loc, v); }
Value Emitter::add(Value x, Value y) { return mlir::arith::AddIOp::create(b, loc, x, y); }
Value Emitter::sub(Value x, Value y) { return mlir::arith::SubIOp::create(b, loc, x, y); }
Value Emitter::mul(Value x, Value y) { return mlir::arith::MulIOp::create(b, loc, x, y); }
Value Emitter::div(Value x, Value y) { return mlir::arith::DivUIOp::create(b, loc, x, y); }
Value Emitter::rem(Value x, Value y) { return mlir::arith::RemUIOp::create(b, loc, x, y); }
Value Emitter::bit_and(Value x, Value y) { return mlir::arith::AndIOp::create(b, loc, x, y); }
Value Emitter::bit_xor(Value x, Value y) { return mlir::arith::XOrIOp::create(b, loc, x, y); }
Value Emitter::shl(Value x, Value y) { return mlir::arith::ShLIOp::create(b, loc, x, y); }
Value Emitter::shr(Value x, Value y) { return mlir::arith::ShRUIOp::create(b, loc, x, y); }
Value Emitter::eq(Value x, Value y) {
  return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq, x, y);
}
Value Emitter::ult(Value x, Value y) {
  return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult, x, y);
}
Value Emitter::to_i32(Value v) { return mlir::arith::IndexCastUIOp::create(b, loc, i32(), v); }
Value Emitter::to_index(Value v) { return mlir::arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v); }
Value Emitter::zext64(Value v) { return mlir::arith::ExtUIOp::create(b, loc, i64(), v); }

Value Emitter::thread_idx() { return mlir::NVVM::ThreadIdXOp::create(b, loc, i32()); }

Value Emitter::block_idx(int dim) {
  if (dim == 0) return mlir::NVVM::BlockIdXOp::create(b, loc, i32());
  if (dim == 1) return mlir::NVVM::BlockIdYOp::create(b, loc, i32());
  return mlir::NVVM::BlockIdZOp::create(b, loc, i32());
}

Value Emitter::grid_dim(int dim) {
  if (dim == 0) return mlir::NVVM::GridDimXOp::create(b, loc, i32());
  if (dim == 1) return mlir::NVVM::GridDimYOp::create(b, loc, i32());
  return mlir::NVVM::GridDimZOp::create(b, loc, i32());
}

// Indices derived from threadIdx are not provably uniform to the compiler; broadcasting lane
// 0's value with shfl.sync.idx makes them so, which keeps role branches free of divergence.
static Value make_warp_uniform(Emitter& e, Value v) {
  Value all = e.c32(-1);
  return mlir::NVVM::ShflOp::create(e.b, e.loc, e.i32(), all, v, e.c32(0), e.c32(0x1f),
                                    mlir::NVVM::ShflKind::idx, mlir::UnitAttr());
}

Value Emitter::warp_idx() { return make_warp_uniform(*this, div(thread_idx(), c32(32))); }
Value Emitter::lane_idx() { return rem(thread_idx(), c32(32)); }
Value Emitter::warpgroup_idx() { return make_warp_uniform(*this, div(thread_idx(), c32(128))); }

void Emitter::if_then(Value cond, const std::function<void()>& then) {
  auto op = mlir::scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
}

llvm::SmallVector<Value> Emitter::if_else(Value cond, mlir::TypeRange types,
                                          const std::function<llvm::SmallVector<Value>()>& then,
                                          const std::function<llvm::SmallVector<Value>()>& otherwise) {
  auto op = mlir::scf::IfOp::create(b, loc, types, cond, /*withElseRegion=*/true);
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&op.getThenRegion().front());
    mlir::scf::YieldOp::create(b, loc, then());
    b.setInsertionPointToStart(&op.getElseRegion().front());
    mlir::scf::YieldOp::create(b, loc, otherwise());
  }
  return llvm::SmallVector<Value>(op.getResults().begin(), op.getResults().end());
}

llvm::SmallVector<Value> Emitter::for_loop(
    Value lb, Value ub, Value step, mlir::ValueRange init,
    const std::function<llvm::SmallVector<Value>(Value, mlir::ValueRange)>& body) {
  auto op = mlir::scf::ForOp::create(
      b, loc, lb, ub, step, init, [&](mlir::OpBuilder& nested, mlir::Location, Value iv, mlir::ValueRange carried) {
        // Emit through this Emitter's builder, positioned in the new body.
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(nested.getInsertionBlock());
        llvm::SmallVector<Value> next = body(iv, carried);
        mlir::scf::YieldOp::create(b, loc, next);
      });
  return llvm::SmallVector<Value>(op.getResults());
}

void Emitter::barrier_sync() { mlir::NVVM::Barrier0Op::create(b, loc); }

void Emitter::named_barrier(int id, int threads) { named_barrier(c32(id), threads); }

void Emitter::named_barrier(Value id, int threads) {
  mlir::NVVM::BarrierOp::create(b, loc, mlir::Type(), id, c32(threads), mlir::NVVM::BarrierReductionAttr(), Value());
}

void Emitter::named_barrier_arrive(Value id, int threads) {
  mlir::NVVM::BarrierArriveOp::create(b, loc, id, c32(threads));
}

Value Emitter::select(Value cond, Value x, Value y) { return mlir::arith::SelectOp::create(b, loc, cond, x, y); }

Value Emitter::ceil_div(Value x, Value y) { return mlir::arith::CeilDivUIOp::create(b, loc, x, y); }

Value Emitter::smem_offset(Value base, int64_t bytes) { return smem_offset(base, c32(bytes)); }

Value Emitter::smem_offset(Value base, Value bytes_i32) {
  return mlir::LLVM::GEPOp::create(b, loc, smem_ptr_type(), b.getI8Type(), base,
                                   llvm::ArrayRef<mlir::LLVM::GEPArg>{bytes_i32});
}

Value Emitter::smem_address32(Value smem_ptr) {
  return mlir::LLVM::PtrToIntOp::create(b, loc, i32(), smem_ptr);
}

}  // namespace mgpu::core::ir
