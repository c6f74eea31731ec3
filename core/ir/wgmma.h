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

mlir::Type wgmma_accumulator_type(Emitter& e, int n);
mlir::Value wgmma_zero_accumulator(Emitter& e, int n);
// One m64nNk16 MMA. a_k_major / b_k_major: whether the operand's contiguous dimension is K
// (otherwise M, resp. N: the "transposed" layouts wgmma supports for 16-bit inputs).
mlir::Value wgmma(Emitter& e, mlir::Value acc, mlir::Value desc_a, mlir::Value desc_b, int n, MmaInput input,
                  bool a_k_major, bool b_k_major);
void wgmma_fence(Emitter& e);
void wgmma_commit(Emitter& e);
void wgmma_wait(Emitter& e, int max_pending);

}  // namespace mgpu::core::ir
