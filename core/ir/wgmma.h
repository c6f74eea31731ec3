// Hopper warpgroup MMA (wgmma.mma_async): D[64 x N] (f32, in registers across the 128 threads
// of a warpgroup) += A[64 x 16] . B[16 x N], with A and B read from SMEM through 64-bit matrix
// descriptors. Contract: smem_descriptor() encodes the PTX ISA "matrix descriptor" (start
// address, leading/stride byte offsets, swizzle mode) for a 1024-aligned swizzled tile;
// an accumulator for width N is an LLVM struct of N/2 f32 per thread; wgmma() must be bracketed
// by wgmma_fence() before the first MMA that reads registers written since, and
// wgmma_commit() / wgmma_wait(n) to retire groups.
#pragma once

#include <cstdint>

#include "core/ir/emitter.h"
#include "core/ir/tile_types.h"

namespace mgpu::core::ir {

// The descriptor's constant part (everything but the address), as the PTX ISA lays it out.
std::uint64_t wgmma_descriptor_bits(Swizzle swizzle, std::int64_t leading_byte_offset, std::int64_t stride_byte_offset);
mlir::Value smem_descriptor(Emitter& e, mlir::Value smem_ptr, Swizzle swizzle, std::int64_t leading_byte_offset,
                            std::int64_t stride_byte_offset);
// The descriptor of `smem_ptr` with the given constant part (the address field filled in).
mlir::Value descriptor_with_address(Emitter& e, mlir::Value smem_ptr, std::uint64_t constant_bits);
// `desc` moved `bytes` (a multiple of 16) further: one 64-bit add on the address field, which
// holds (address & 0x3FFFF) >> 4 in bits 0-13. Exact while address + bytes stays below 256 KiB
// (no carry out of the field), which every CTA's shared window (at most 228 KiB) guarantees.
mlir::Value descriptor_advanced(Emitter& e, mlir::Value desc, std::int64_t bytes);

mlir::Type wgmma_accumulator_type(Emitter& e, int n);
mlir::Value wgmma_zero_accumulator(Emitter& e, int n);
// One m64nNk16 MMA. a_k_major / b_k_major: whether the operand's contiguous dimension is K
// (otherwise M, resp. N: the "transposed" layouts wgmma supports for 16-bit inputs).
mlir::Value wgmma(Emitter& e, mlir::Value acc, mlir::Value desc_a, mlir::Value desc_b, int n, MmaInput input,
                  bool a_k_major, bool b_k_major);
// wgmma with a run-time scale-d (PTX ISA "wgmma.mma_async", operand scale-d): D = A.B + D when
// `accumulate` (i1) is true, D = A.B when false, so a tile's first MMA needs no zeroed
// accumulator. Zeroing it with movs between wgmma.fence and the MMA made ptxas inject
// warpgroup.arrive/wait (advisories C7519/C7517) and serialise the first k-step. Upstream's
// nvvm.wgmma.mma_async takes scale-d only as a constant, hence inline PTX here.
mlir::Value wgmma_scaled(Emitter& e, mlir::Value acc, mlir::Value desc_a, mlir::Value desc_b, int n, MmaInput input,
                         bool a_k_major, bool b_k_major, mlir::Value accumulate);
// wgmma with A from registers (PTX ISA "wgmma.mma_async", the register form of operand a;
// "Matrix Fragments for wgmma.mma_async.m64nNk16": four .b32 registers per thread, each two
// 16-bit elements). B is read through `desc_b`; only B takes imm-trans (A in registers is K-major
// by construction). As wgmma_scaled: D = A.B + D when `accumulate` (i1), else D = A.B.
mlir::Value wgmma_reg_a(Emitter& e, mlir::Value acc, llvm::ArrayRef<mlir::Value> a_frag, mlir::Value desc_b, int n,
                        MmaInput input, bool b_k_major, mlir::Value accumulate);
// The A fragment of k16 slice `chunk` of an f32 accumulator (64 x N) rounded to `input`: the
// m64nNk16 accumulator's registers 8c..8c+7 hold the same (row, column) pairs of columns
// 16c..16c+15 as the A fragment's four registers hold of a 64 x 16 A (both figures of the PTX ISA
// section above: rows lane/4 (+8), columns 2*(lane%4) (+1, +8)), so P = softmax(S) feeds the next
// MMA without leaving registers (FlashAttention-3's trick). Returns {a0, a1, a2, a3}.
llvm::SmallVector<mlir::Value> a_fragment_from_accumulator(Emitter& e, mlir::Value acc, int chunk, MmaInput input);
// An accumulator with no defined value, for a first MMA with accumulate = false.
mlir::Value wgmma_undefined_accumulator(Emitter& e, int n);
void wgmma_fence(Emitter& e);
// Registers an MMA reads (an accumulator written by other instructions, an A fragment) pinned
// before a wgmma_fence(): an empty side-effecting inline asm that reads and rewrites each value
// (CUTLASS's warpgroup_fence_operand), so LLVM computes them before it and cannot sink their
// movs, cvts or multiplies past the fence -- which the PTX ISA's wgmma.fence rule forbids, and
// which LLVM did to a rescaled accumulator and its packed P (found by the virtual device).
llvm::SmallVector<mlir::Value> pin_registers(Emitter& e, mlir::ValueRange values);  // f32 or i32 each
mlir::Value pin_accumulator(Emitter& e, mlir::Value acc);
void wgmma_commit(Emitter& e);
void wgmma_wait(Emitter& e, int max_pending);

}  // namespace mgpu::core::ir
