// How the matmul kernels move operand tiles with TMA, shared by every matmul template: the
// SMEM layout of a pipeline stage (swizzle atoms of the contiguous dimension, each a region of
// rows), the box loads that fill it, and the host-side tensor maps that describe A, B and C.
// Contract: a stage of an operand holds `atoms` regions of rows_per_atom rows x row_bytes
// bytes, each region swizzled with a row_bytes span; emit_stage_load() issues this CTA's
// boxes for one stage (all rows, or its share of them when the tile is multicast) completing
// on `barrier`; operand_tensor_map() returns the map whose box matches those loads.
#pragma once

#include <cstdint>

#include "core/ir/emitter.h"
#include "core/ir/tile_types.h"
#include "core/tensor_map.h"
#include "kernels/matmul_problem.h"

namespace mgpu::kernels {

core::ir::Swizzle swizzle_of(int bytes);  // 32, 64, 128 -> that swizzle, else none
core::TmaElement tma_element(DType t);
core::ir::MmaInput mma_input(DType t);     // bf16 or f16 inputs
mlir::Type element_type(core::ir::Emitter& e, DType t);

// 128-byte swizzle when a K row of the tile spans 128 bytes or more, else the row's width.
int k_swizzle_bytes(DType in, int tile_k);

struct OperandLoads {
  int box_rows = 0;       // rows per TMA box
  int row_bytes = 0;      // bytes per SMEM row (the swizzle span)
  int atoms = 0;          // atoms per stage along the contiguous dimension
  int atom_elems = 0;     // elements per atom along the contiguous dimension
  int rows_per_atom = 0;  // rows of one atom region in SMEM
  int rows_loaded = 0;    // rows this CTA loads per atom (half when multicast)
};

OperandLoads plan_loads(int rows_per_atom, int atoms, int row_bytes, int in_bytes, bool multicast);

struct StageLoad {
  mlir::Value descriptor;      // CUtensorMap pointer
  OperandLoads layout;
  mlir::Value stage;           // SMEM pointer of the stage
  mlir::Value barrier;         // mbarrier the bytes complete on
  mlir::Value outer0, inner0;  // the tile's first row and first contiguous element
  mlir::Value share;           // multicast: which half of the rows this CTA loads (else null)
  mlir::Value multicast_mask;  // multicast: i16 CTA mask (else null)
  bool two_cta = false;        // cta_group::2 load (barrier may be the pair leader's)
};
void emit_stage_load(core::ir::Emitter& e, const StageLoad& s);

core::TensorMap2D operand_tensor_map(std::int64_t rows, std::int64_t cols, DType t, int box_rows, int box_cols,
                                     core::ir::Swizzle swizzle);

}  // namespace mgpu::kernels
