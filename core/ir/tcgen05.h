// Blackwell (sm_100a) fifth-generation tensor cores: the accumulator lives in tensor memory
// (TMEM, 128 lanes x 512 columns of 32 bit per SM) instead of registers. Contract:
// tmem_alloc() is executed by one whole warp and writes the allocated TMEM address into the
// 4-byte SMEM slot given; read it back with tmem_address(); every allocation is freed with
// tmem_dealloc() by the same warp before exit, after tmem_relinquish(). `two_cta` selects
// cta_group::2 (an MMA pair across a 2-CTA cluster). tcgen05_mma() is issued by one thread;
// tcgen05_commit() makes `barrier` track completion of the MMAs issued before it.
#pragma once

#include <cstdint>

#include "core/ir/emitter.h"
#include "core/ir/wgmma.h"

namespace mgpu::core::ir {

// PTX ISA "Instruction descriptor" for tcgen05.mma kind::f16 with f32 accumulation.
std::uint32_t tcgen05_instr_descriptor(int m, int n, MmaInput input, bool a_mn_major, bool b_mn_major);

void tmem_alloc(Emitter& e, mlir::Value smem_slot, int columns, bool two_cta);
mlir::Value tmem_address(Emitter& e, mlir::Value smem_slot);  // !llvm.ptr<6>
void tmem_relinquish(Emitter& e, bool two_cta);
void tmem_dealloc(Emitter& e, mlir::Value tmem, int columns, bool two_cta);

void tcgen05_mma(Emitter& e, mlir::Value d_tmem, mlir::Value desc_a, mlir::Value desc_b, mlir::Value idesc,
                 mlir::Value accumulate, bool two_cta);
void tcgen05_commit(Emitter& e, mlir::Value barrier, mlir::Value multicast_mask, bool two_cta);
// tcgen05.ld.32x32b.x<count>: each thread of the warp reads `count` consecutive 32-bit
// columns of its lane, followed in the same asm statement by tcgen05.wait::ld, so the returned
// vector<count x i32> is usable at once and nothing can read the registers before the wait.
mlir::Value tmem_load(Emitter& e, mlir::Value tmem, int count);
// The TMEM address `lane` lanes and `column` columns past `tmem` (i32 values).
mlir::Value tmem_offset(Emitter& e, mlir::Value tmem, mlir::Value lane, mlir::Value column);
// tcgen05.fence::before_thread_sync / after_thread_sync: orders tcgen05 operations (MMAs,
// TMEM loads) against the thread synchronization (barrier, mbarrier) that follows / precedes.
void tcgen05_fence(Emitter& e, bool before_thread_sync);

// The PTX ISA "shared memory descriptor" of tcgen05.mma: wgmma's layout (same start, LBO, SBO
// and swizzle fields) plus the fixed version bits 46-48 = 0b001 that sm_100 requires.
std::uint64_t tcgen05_descriptor_bits(Swizzle swizzle, std::int64_t leading_byte_offset,
                                      std::int64_t stride_byte_offset);
mlir::Value tcgen05_smem_descriptor(Emitter& e, mlir::Value smem_ptr, Swizzle swizzle,
                                    std::int64_t leading_byte_offset, std::int64_t stride_byte_offset);

}  // namespace mgpu::core::ir
