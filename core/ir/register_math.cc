#include "core/ir/register_math.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mgpu::core::ir {

using mlir::Value;

namespace {
// One pure PTX instruction as inline asm: no side effects, so LLVM may schedule or drop it.
Value pure_asm(Emitter& e, mlir::Type result, mlir::ValueRange operands, const char* text, const char* constraints) {
  return mlir::LLVM::InlineAsmOp::create(e.b, e.loc, result, operands, text, constraints,
                                         /*has_side_effects=*/false, /*is_align_stack=*/false,
                                         mlir::LLVM::tailcallkind::TailCallKind::None, mlir::LLVM::AsmDialectAttr(),
                                         mlir::ArrayAttr())
      .getResult(0);
}
}  // namespace

Value ex2_approx(Emitter& e, Value x) {
  return pure_asm(e, e.b.getF32Type(), mlir::ValueRange{x}, "ex2.approx.ftz.f32 $0, $1;", "=f,f");
}

Value lg2_approx(Emitter& e, Value x) {
  return pure_asm(e, e.b.getF32Type(), mlir::ValueRange{x}, "lg2.approx.ftz.f32 $0, $1;", "=f,f");
}

Value shfl_xor(Emitter& e, Value v, int lane_mask) {
  // c = 0x1f: the whole warp is one segment (PTX ISA shfl.sync, operand c's clamp and mask).
  // Convergent in fact, though inline asm cannot say so: it is emitted where every lane runs.
  const bool is_f32 = v.getType().isF32();
  Value bits = is_f32 ? mlir::LLVM::BitcastOp::create(e.b, e.loc, e.i32(), v).getResult() : v;
  Value r = mlir::LLVM::InlineAsmOp::create(e.b, e.loc, e.i32(), mlir::ValueRange{bits, e.c32(lane_mask)},
                                            "shfl.sync.bfly.b32 $0, $1, $2, 0x1f, 0xffffffff;", "=r,r,r",
                                            /*has_side_effects=*/true, false, mlir::LLVM::tailcallkind::TailCallKind::None,
                                            mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr())
                .getResult(0);
  return is_f32 ? mlir::LLVM::BitcastOp::create(e.b, e.loc, e.b.getF32Type(), r).getResult() : r;
}

Value quad_max(Emitter& e, Value v) {
  v = fmax(e, v, shfl_xor(e, v, 1));
  return fmax(e, v, shfl_xor(e, v, 2));
}

Value quad_sum(Emitter& e, Value v) {
  v = fadd(e, v, shfl_xor(e, v, 1));
  return fadd(e, v, shfl_xor(e, v, 2));
}

Value pack_16x2(Emitter& e, Value lo, Value hi, MmaInput type) {
  const char* text = type == MmaInput::BF16 ? "cvt.rn.bf16x2.f32 $0, $1, $2;" : "cvt.rn.f16x2.f32 $0, $1, $2;";
  return pure_asm(e, e.i32(), mlir::ValueRange{hi, lo}, text, "=r,f,f");
}

Value fmax(Emitter& e, Value a, Value b) { return mlir::arith::MaxNumFOp::create(e.b, e.loc, a, b); }
Value fadd(Emitter& e, Value a, Value b) { return mlir::arith::AddFOp::create(e.b, e.loc, a, b); }
Value fsub(Emitter& e, Value a, Value b) { return mlir::arith::SubFOp::create(e.b, e.loc, a, b); }
Value fmul(Emitter& e, Value a, Value b) { return mlir::arith::MulFOp::create(e.b, e.loc, a, b); }
Value ffma(Emitter& e, Value a, Value b, Value c) { return mlir::LLVM::FMAOp::create(e.b, e.loc, a, b, c); }
Value fdiv(Emitter& e, Value a, Value b) { return mlir::arith::DivFOp::create(e.b, e.loc, a, b); }
Value f32(Emitter& e, double v) {
  return mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getF32FloatAttr(static_cast<float>(v)));
}

}  // namespace mgpu::core::ir
