#include "kernels/matmul_common/operand_tma.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ir/tma.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mgpu::kernels {

using core::ir::Swizzle;
using mlir::Value;

Swizzle swizzle_of(int bytes) {
  return bytes == 128 ? Swizzle::B128 : bytes == 64 ? Swizzle::B64 : bytes == 32 ? Swizzle::B32 : Swizzle::None;
}

core::TmaElement tma_element(DType t) {
  return t == DType::BF16 ? core::TmaElement::BF16 : t == DType::F16 ? core::TmaElement::F16 : core::TmaElement::F32;
}

core::ir::MmaInput mma_input(DType t) { return t == DType::BF16 ? core::ir::MmaInput::BF16 : core::ir::MmaInput::F16; }

mlir::Type element_type(core::ir::Emitter& e, DType t) {
  return t == DType::BF16 ? mlir::Type(e.b.getBF16Type())
         : t == DType::F16 ? mlir::Type(e.b.getF16Type())
                           : mlir::Type(e.b.getF32Type());
}

int k_swizzle_bytes(DType in, int tile_k) { return std::min(128, tile_k * size_in_bytes(in)); }

OperandLoads plan_loads(int rows_per_atom, int atoms, int row_bytes, int in_bytes, bool multicast) {
  OperandLoads l;
  l.rows_per_atom = rows_per_atom;
  l.atoms = atoms;
  l.row_bytes = row_bytes;
  l.atom_elems = row_bytes / in_bytes;
  l.rows_loaded = multicast ? rows_per_atom / 2 : rows_per_atom;
  // A TMA box side is at most 256, and every box of a stage has the map's one box size: the
  // boxes must tile the rows exactly (384 rows as two 256-row boxes overran the stage into the
  // next one -- found by the virtual device). The largest divisor of the rows that is at most
  // 256 and a multiple of 8 keeps each box on whole 8-row swizzle atoms.
  l.box_rows = l.rows_loaded;
  if (l.rows_loaded > 256)
    for (l.box_rows = 256; l.box_rows > 8 && (l.rows_loaded % l.box_rows || l.box_rows % 8); --l.box_rows) {
    }
  // cp.async.bulk.tensor writes to a 128-byte aligned shared address (PTX ISA 9.7.9.25): each
  // box starts at a sum of these from the 1024-byte aligned stage.
  for (int bytes : {l.rows_per_atom * row_bytes, l.rows_loaded * row_bytes, l.box_rows * row_bytes})
    if (bytes % 128 != 0)
      throw core::Error(core::ErrorKind::Compile,
                        fmt::format("operand load plan: a TMA box of {} rows of {} bytes ({} of {} rows{}) would "
                                    "start off a 128-byte boundary",
                                    l.box_rows, row_bytes, l.rows_loaded, rows_per_atom, multicast ? ", multicast" : ""));
  return l;
}

void emit_stage_load(core::ir::Emitter& e, const StageLoad& s) {
  const OperandLoads& l = s.layout;
  Value share = s.share ? s.share : e.c32(0);
  for (int atom = 0; atom < l.atoms; ++atom)
    for (int r = 0; r < l.rows_loaded; r += l.box_rows) {
      Value row_in_atom = e.add(e.mul(share, e.c32(l.rows_loaded)), e.c32(r));
      Value off = e.add(e.c32(std::int64_t(atom) * l.rows_per_atom * l.row_bytes), e.mul(row_in_atom, e.c32(l.row_bytes)));
      Value inner = e.add(s.inner0, e.c32(atom * l.atom_elems));
      Value outer = e.add(s.outer0, row_in_atom);
      core::ir::tma_load(e, s.descriptor, e.smem_offset(s.stage, off), s.barrier, {inner, outer}, s.multicast_mask,
                         s.two_cta);
    }
}

core::TensorMap2D operand_tensor_map(std::int64_t rows, std::int64_t cols, DType t, int box_rows, int box_cols,
                                     Swizzle swizzle) {
  core::TensorMap2D m;
  m.element = tma_element(t);
  m.rows = static_cast<std::uint64_t>(rows);
  m.cols = static_cast<std::uint64_t>(cols);
  m.row_stride_bytes = static_cast<std::uint64_t>(cols) * size_in_bytes(t);
  m.box_rows = static_cast<std::uint32_t>(box_rows);
  m.box_cols = static_cast<std::uint32_t>(box_cols);
  m.swizzle = swizzle;
  return m;
}

}  // namespace mgpu::kernels
