#include "core/ir/tcgen05.h"

#include <fmt/format.h>

#include "core/error.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mgpu::core::ir {

using mlir::Value;

namespace {
mlir::NVVM::CTAGroupKind group(bool two_cta) {
  return two_cta ? mlir::NVVM::CTAGroupKind::CTA_2 : mlir::NVVM::CTAGroupKind::CTA_1;
}
}  // namespace

std::uint32_t tcgen05_instr_descriptor(int m, int n, MmaInput input, bool a_mn_major, bool b_mn_major) {
  // kind::f16 layout: bits 4-5 D format (1 = f32), 7-9 A format, 10-12 B format
  // (0 = f16, 1 = bf16), 15 A is MN-major, 16 B is MN-major, 17-22 N >> 3, 24-28 M >> 4.
  if (m != 64 && m != 128 && m != 256)
    throw Error(ErrorKind::InvalidInput, fmt::format("tcgen05.mma M must be 64, 128 or 256, got {}", m));
  if (n < 8 || n > 256 || n % 8 != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("tcgen05.mma N must be a multiple of 8 in [8, 256], got {}", n));
  std::uint32_t ab = input == MmaInput::BF16 ? 1 : 0;
  return (1u << 4) | (ab << 7) | (ab << 10) | (std::uint32_t(a_mn_major) << 15) | (std::uint32_t(b_mn_major) << 16) |
         (std::uint32_t(n >> 3) << 17) | (std::uint32_t(m >> 4) << 24);
}

void tmem_alloc(Emitter& e, Value smem_slot, int columns, bool two_cta) {
  if (columns < 32 || columns > 512 || (columns & (columns - 1)) != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("TMEM allocations are a power of two in [32, 512] columns, got {}", columns));
  mlir::NVVM::Tcgen05AllocOp::create(e.b, e.loc, smem_slot, e.c32(columns), group(two_cta));
}

Value tmem_address(Emitter& e, Value smem_slot) {
  Value raw = mlir::LLVM::LoadOp::create(e.b, e.loc, e.i32(), smem_slot);
  auto tmem_ptr = mlir::LLVM::LLVMPointerType::get(e.b.getContext(), 6);
  return mlir::LLVM::IntToPtrOp::create(e.b, e.loc, tmem_ptr, raw);
}

void tmem_relinquish(Emitter& e, bool two_cta) {
  mlir::NVVM::Tcgen05RelinquishAllocPermitOp::create(e.b, e.loc, group(two_cta));
}

void tmem_dealloc(Emitter& e, Value tmem, int columns, bool two_cta) {
  mlir::NVVM::Tcgen05DeallocOp::create(e.b, e.loc, tmem, e.c32(columns), group(two_cta));
}

void tcgen05_mma(Emitter& e, Value d_tmem, Value desc_a, Value desc_b, Value idesc, Value accumulate, bool two_cta) {
  mlir::NVVM::Tcgen05MMAOp::create(e.b, e.loc, mlir::NVVM::Tcgen05MMAKind::F16, group(two_cta),
                                   mlir::NVVM::Tcgen05MMACollectorOp::DISCARD, false, d_tmem, desc_a, desc_b, idesc,
                                   accumulate, Value(), Value());
}

void tcgen05_commit(Emitter& e, Value barrier, Value multicast_mask, bool two_cta) {
  mlir::NVVM::Tcgen05CommitOp::create(e.b, e.loc, barrier, multicast_mask, group(two_cta));
}

Value tmem_load(Emitter& e, Value tmem, int count) {
  // PTX ISA 9.7.16.8.3 (tcgen05.ld) / 9.7.16.8.6 (tcgen05.wait): the destination registers are
  // undefined until tcgen05.wait::ld. The NVVM load and wait ops carry no data dependence
  // between them, so LLVM moved register copies of the loaded values above the wait (found by
  // the virtual device in every sm_100a kernel). One asm statement holds both: its outputs
  // exist only after the wait.
  std::string text = fmt::format("tcgen05.ld.sync.aligned.32x32b.x{}.b32 {{", count);
  std::string constraints;
  for (int i = 0; i < count; ++i) {
    text += fmt::format("{}${}", i ? ", " : "", i);
    constraints += "=r,";
  }
  text += fmt::format("}}, [${}];\n\ttcgen05.wait::ld.sync.aligned;", count);
  constraints += "r";
  llvm::SmallVector<mlir::Type> fields(count, e.i32());
  auto result_t = mlir::LLVM::LLVMStructType::getLiteral(e.b.getContext(), fields);
  Value address = mlir::LLVM::PtrToIntOp::create(e.b, e.loc, e.i32(), tmem);
  auto asm_op = mlir::LLVM::InlineAsmOp::create(e.b, e.loc, result_t, mlir::ValueRange{address}, text, constraints,
                                                /*has_side_effects=*/true, /*is_align_stack=*/false,
                                                mlir::LLVM::tailcallkind::TailCallKind::None,
                                                mlir::LLVM::AsmDialectAttr(), mlir::ArrayAttr());
  auto vec = mlir::VectorType::get({count}, e.i32());
  Value out = mlir::LLVM::UndefOp::create(e.b, e.loc, vec);
  for (int i = 0; i < count; ++i) {
    Value x = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, asm_op.getResult(0), llvm::ArrayRef<std::int64_t>{i});
    out = mlir::LLVM::InsertElementOp::create(e.b, e.loc, out, x, e.c32(i));
  }
  return out;
}

Value tmem_offset(Emitter& e, Value tmem, Value lane, Value column) {
  // A TMEM address is 32 bits: lane in bits 16-31, column in bits 0-15.
  Value raw = mlir::LLVM::PtrToIntOp::create(e.b, e.loc, e.i32(), tmem);
  Value moved = e.add(raw, e.add(e.shl(lane, e.c32(16)), column));
  return mlir::LLVM::IntToPtrOp::create(e.b, e.loc, tmem.getType(), moved);
}

void tcgen05_fence(Emitter& e, bool before_thread_sync) {
  mlir::NVVM::Tcgen05FenceOp::create(
      e.b, e.loc, before_thread_sync ? mlir::NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC
                                     : mlir::NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
}

std::uint64_t tcgen05_descriptor_bits(Swizzle swizzle, std::int64_t lbo, std::int64_t sbo) {
  return wgmma_descriptor_bits(swizzle, lbo, sbo) | (std::uint64_t(1) << 46);
}

Value tcgen05_smem_descriptor(Emitter& e, Value smem_ptr, Swizzle swizzle, std::int64_t lbo, std::int64_t sbo) {
  return descriptor_with_address(e, smem_ptr, tcgen05_descriptor_bits(swizzle, lbo, sbo));
}

}  // namespace mgpu::core::ir
