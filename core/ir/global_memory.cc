#include "core/ir/global_memory.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mgpu::core::ir {

using mlir::Value;

namespace {
mlir::Type f32x4(Emitter& e) { return mlir::VectorType::get({4}, e.b.getF32Type()); }

// One PTX instruction as inline asm with side effects and a memory clobber.
mlir::LLVM::InlineAsmOp asm_op(Emitter& e, mlir::Type result, mlir::ValueRange operands, const char* text,
                               const char* constraints) {
  return mlir::LLVM::InlineAsmOp::create(e.b, e.loc, result, operands, text, constraints,
                                         /*has_side_effects=*/true, /*is_align_stack=*/false,
                                         mlir::LLVM::tailcallkind::TailCallKind::None, mlir::LLVM::AsmDialectAttr(),
                                         mlir::ArrayAttr());
}
}  // namespace

Value global(Emitter& e, Value generic_ptr) {
  return mlir::LLVM::AddrSpaceCastOp::create(e.b, e.loc, mlir::LLVM::LLVMPointerType::get(e.b.getContext(), 1),
                                             generic_ptr);
}

Value global_offset(Emitter& e, Value global_ptr, Value bytes_i64) {
  return mlir::LLVM::GEPOp::create(e.b, e.loc, global_ptr.getType(), e.b.getI8Type(), global_ptr,
                                   llvm::ArrayRef<mlir::LLVM::GEPArg>{bytes_i64});
}

void store_f32x4(Emitter& e, Value global_ptr, Value vec4) {
  mlir::LLVM::StoreOp::create(e.b, e.loc, vec4, global_ptr, 16);
}

Value load_f32x4(Emitter& e, Value global_ptr) {
  return mlir::LLVM::LoadOp::create(e.b, e.loc, f32x4(e), global_ptr, 16);
}

Value atomic_add_acq_rel_gpu(Emitter& e, Value global_ptr, Value v) {
  return asm_op(e, e.i32(), mlir::ValueRange{global_ptr, v}, "atom.acq_rel.gpu.global.add.u32 $0, [$1], $2;",
                "=r,l,r,~{memory}")
      .getResult(0);
}

void store_relaxed_gpu(Emitter& e, Value global_ptr, Value v) {
  asm_op(e, mlir::Type(), mlir::ValueRange{global_ptr, v}, "st.relaxed.gpu.global.u32 [$0], $1;", "l,r,~{memory}");
}

void store_shared_u32(Emitter& e, Value smem_ptr, Value v) { mlir::LLVM::StoreOp::create(e.b, e.loc, v, smem_ptr, 4); }

Value load_shared_u32(Emitter& e, Value smem_ptr) { return mlir::LLVM::LoadOp::create(e.b, e.loc, e.i32(), smem_ptr, 4); }

}  // namespace mgpu::core::ir
