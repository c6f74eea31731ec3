#include "core/ir/wgmma.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/ir/register_math.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mgpu::core::ir {

using mlir::Value;

std::uint64_t wgmma_descriptor_bits(Swizzle swizzle, std::int64_t lbo, std::int64_t sbo) {
  // PTX ISA, "Matrix Descriptor Format" (sm_90): bits 0-13 start address >> 4,
  // 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4,
  // 49-51 base offset (0: tiles are 1024-aligned), 62-63 swizzle (1: 128B, 2: 64B, 3: 32B).
  std::uint64_t mode = swizzle == Swizzle::B128 ? 1 : swizzle == Swizzle::B64 ? 2 : swizzle == Swizzle::B32 ? 3 : 0;
  return ((std::uint64_t(lbo) >> 4) & 0x3FFF) << 16 | ((std::uint64_t(sbo) >> 4) & 0x3FFF) << 32 | mode << 62;
}

Value descriptor_with_address(Emitter& e, Value smem_ptr, std::uint64_t constant_bits) {
  Value addr = e.zext64(e.smem_address32(smem_ptr));
  Value addr_field = mlir::arith::AndIOp::create(
      e.b, e.loc, mlir::arith::ShRUIOp::create(e.b, e.loc, addr, e.c64(4)), e.c64(0x3FFF));
  return mlir::arith::OrIOp::create(e.b, e.loc, addr_field, e.c64(static_cast<std::int64_t>(constant_bits)));
}

Value descriptor_advanced(Emitter& e, Value desc, std::int64_t bytes) {
  if (bytes % 16 != 0 || bytes < 0 || bytes >= (1 << 18))
    throw Error(ErrorKind::Compile, fmt::format("descriptor_advanced: {} bytes is no 16-byte step inside shared memory", bytes));
  if (bytes == 0) return desc;
  return mlir::arith::AddIOp::create(e.b, e.loc, desc, e.c64(bytes >> 4));
}

Value smem_descriptor(Emitter& e, Value smem_ptr, Swizzle swizzle, std::int64_t lbo, std::int64_t sbo) {
  return descriptor_with_address(e, smem_ptr, wgmma_descriptor_bits(swizzle, lbo, sbo));
}

mlir::Type wgmma_accumulator_type(Emitter& e, int n) {
  llvm::SmallVector<mlir::Type> fields(n / 2, e.b.getF32Type());
  return mlir::LLVM::LLVMStructType::getLiteral(e.b.getContext(), fields);
}

Value wgmma_zero_accumulator(Emitter& e, int n) {
  mlir::Type t = wgmma_accumulator_type(e, n);
  Value acc = mlir::LLVM::UndefOp::create(e.b, e.loc, t);
  Value zero = mlir::arith::ConstantOp::create(e.b, e.loc, e.b.getF32FloatAttr(0.0f));
  for (int i = 0; i < n / 2; ++i) acc = mlir::LLVM::InsertValueOp::create(e.b, e.loc, acc, zero, i);
  return acc;
}

Value wgmma(Emitter& e, Value acc, Value desc_a, Value desc_b, int n, MmaInput input, bool a_k_major, bool b_k_major) {
  if (n < 8 || n > 256 || n % 8 != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("wgmma N must be a multiple of 8 in [8, 256], got {}", n));
  auto type = input == MmaInput::BF16 ? mlir::NVVM::WGMMATypes::bf16 : mlir::NVVM::WGMMATypes::f16;
  auto shape = mlir::NVVM::MMAShapeAttr::get(e.b.getContext(), 64, n, 16);
  // wgmma's layout names follow BLAS: A "row" = K-major; B "col" = K-major.
  auto layout_a = a_k_major ? mlir::NVVM::MMALayout::row : mlir::NVVM::MMALayout::col;
  auto layout_b = b_k_major ? mlir::NVVM::MMALayout::col : mlir::NVVM::MMALayout::row;
  return mlir::NVVM::WgmmaMmaAsyncOp::create(e.b, e.loc, acc.getType(), acc, desc_a, desc_b, shape, type, type,
                                             mlir::NVVM::WGMMATypes::f32, mlir::NVVM::WGMMAScaleOut::one,
                                             mlir::NVVM::WGMMAScaleIn::one, mlir::NVVM::WGMMAScaleIn::one, layout_a,
                                             layout_b, mlir::NVVM::MMAIntOverflowAttr());
}

Value wgmma_undefined_accumulator(Emitter& e, int n) {
  return mlir::LLVM::UndefOp::create(e.b, e.loc, wgmma_accumulator_type(e, n));
}

namespace {

// One wgmma.mma_async as inline PTX with a run-time scale-d: $0..$regs-1 the accumulator out,
// tied to inputs $regs..2*regs-1, then `inputs` (A, as a descriptor or four registers, and the B
// descriptor) and the scale-d flag last. `a_text` names A in the instruction (inputs counted from
// $2*regs), `trans` is the instruction's tail of imm-trans operands.
Value mma_async(Emitter& e, Value acc, int n, MmaInput input, llvm::ArrayRef<Value> inputs, const std::string& a_text,
                const std::string& input_constraints, const std::string& trans, Value accumulate) {
  if (n < 8 || n > 256 || n % 8 != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("wgmma N must be a multiple of 8 in [8, 256], got {}", n));
  const int regs = n / 2;  // f32 accumulator registers per thread
  std::string d;
  for (int i = 0; i < regs; ++i) d += fmt::format("{}${}", i ? ", " : "", i);
  const char* type = input == MmaInput::BF16 ? "bf16" : "f16";
  const int b = 2 * regs + static_cast<int>(inputs.size()) - 1;  // the B descriptor, last before scale-d
  std::string text = fmt::format(
      "{{\n.reg .pred p;\nsetp.ne.b32 p, ${}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{} {{{}}}, {}, ${}, p, 1, 1, {};\n}}",
      b + 1, n, type, type, d, a_text, b, trans);
  std::string constraints;
  for (int i = 0; i < regs; ++i) constraints += "=f,";
  for (int i = 0; i < regs; ++i) constraints += fmt::format("{},", i);
  constraints += input_constraints + ",r";
  llvm::SmallVector<Value> operands;
  for (int i = 0; i < regs; ++i)
    operands.push_back(mlir::LLVM::ExtractValueOp::create(e.b, e.loc, acc, llvm::ArrayRef<std::int64_t>{i}));
  operands.append(inputs.begin(), inputs.end());
  operands.push_back(mlir::arith::ExtUIOp::create(e.b, e.loc, e.i32(), accumulate));
  auto op = mlir::LLVM::InlineAsmOp::create(e.b, e.loc, wgmma_accumulator_type(e, n), operands, text, constraints,
                                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                                            mlir::LLVM::tailcallkind::TailCallKind::None,
                                            mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
  return op.getResult(0);
}

}  // namespace

Value wgmma_scaled(Emitter& e, Value acc, Value desc_a, Value desc_b, int n, MmaInput input, bool a_k_major,
                   bool b_k_major, Value accumulate) {
  // imm-scale-a/b = 1; imm-trans-a/b = 1 for the non-K-major ("transposed") operand.
  const int a = n;  // $2*regs: the A descriptor
  return mma_async(e, acc, n, input, {desc_a, desc_b}, fmt::format("${}", a), "l,l",
                   fmt::format("{}, {}", a_k_major ? 0 : 1, b_k_major ? 0 : 1), accumulate);
}

Value wgmma_reg_a(Emitter& e, Value acc, llvm::ArrayRef<Value> a_frag, Value desc_b, int n, MmaInput input,
                  bool b_k_major, Value accumulate) {
  if (a_frag.size() != 4)
    throw Error(ErrorKind::InvalidInput, fmt::format("wgmma A fragment must be 4 registers, got {}", a_frag.size()));
  const int a0 = n;  // $2*regs: the four A registers
  llvm::SmallVector<Value> inputs(a_frag.begin(), a_frag.end());
  inputs.push_back(desc_b);
  return mma_async(e, acc, n, input, inputs, fmt::format("{{${}, ${}, ${}, ${}}}", a0, a0 + 1, a0 + 2, a0 + 3),
                   "r,r,r,r,l", b_k_major ? "0" : "1", accumulate);
}

llvm::SmallVector<Value> a_fragment_from_accumulator(Emitter& e, Value acc, int chunk, MmaInput input) {
  auto at = [&](int i) {
    return mlir::LLVM::ExtractValueOp::create(e.b, e.loc, acc, llvm::ArrayRef<std::int64_t>{8 * chunk + i}).getResult();
  };
  llvm::SmallVector<Value> frag;
  for (int r = 0; r < 4; ++r) frag.push_back(pack_16x2(e, at(2 * r), at(2 * r + 1), input));
  return frag;
}

llvm::SmallVector<Value> pin_registers(Emitter& e, mlir::ValueRange values) {
  llvm::SmallVector<Value> out;
  if (values.empty()) return out;
  std::string constraints;
  llvm::SmallVector<mlir::Type> types;
  for (Value v : values) {
    if (!v.getType().isF32() && !v.getType().isInteger(32))
      throw Error(ErrorKind::InvalidInput, "pin_registers takes f32 or i32 values");
    constraints += v.getType().isF32() ? "=f," : "=r,";
    types.push_back(v.getType());
  }
  for (std::size_t i = 0; i < values.size(); ++i) constraints += fmt::format("{}{}", i ? "," : "", i);
  mlir::Type result = types.size() == 1 ? types[0] : mlir::LLVM::LLVMStructType::getLiteral(e.b.getContext(), types);
  Value r = mlir::LLVM::InlineAsmOp::create(e.b, e.loc, result, values, "", constraints,
                                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                                            mlir::LLVM::tailcallkind::TailCallKind::None, mlir::LLVM::AsmDialectAttr(),
                                            mlir::ArrayAttr())
                .getResult(0);
  if (types.size() == 1) return {r};
  for (std::size_t i = 0; i < types.size(); ++i)
    out.push_back(mlir::LLVM::ExtractValueOp::create(e.b, e.loc, r, llvm::ArrayRef<std::int64_t>{std::int64_t(i)}));
  return out;
}

Value pin_accumulator(Emitter& e, Value acc) {
  auto st = mlir::cast<mlir::LLVM::LLVMStructType>(acc.getType());
  llvm::SmallVector<Value> fields;
  for (std::size_t i = 0; i < st.getBody().size(); ++i)
    fields.push_back(mlir::LLVM::ExtractValueOp::create(e.b, e.loc, acc, llvm::ArrayRef<std::int64_t>{std::int64_t(i)}));
  llvm::SmallVector<Value> pinned = pin_registers(e, fields);
  Value out = mlir::LLVM::UndefOp::create(e.b, e.loc, acc.getType());
  for (std::size_t i = 0; i < pinned.size(); ++i)
    out = mlir::LLVM::InsertValueOp::create(e.b, e.loc, out, pinned[i], llvm::ArrayRef<std::int64_t>{std::int64_t(i)});
  return out;
}

void wgmma_fence(Emitter& e) { mlir::NVVM::WgmmaFenceAlignedOp::create(e.b, e.loc); }
void wgmma_commit(Emitter& e) { mlir::NVVM::WgmmaGroupSyncAlignedOp::create(e.b, e.loc); }
void wgmma_wait(Emitter& e, int max_pending) {
  mlir::NVVM::WgmmaWaitGroupSyncOp::create(e.b, e.loc, static_cast<int64_t>(max_pending));
}

}  // namespace mgpu::core::ir
