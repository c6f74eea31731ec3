// Global-memory accesses kernels make beside TMA: plain vector loads and stores of f32 (a
// workspace's partial tiles) and the strong operations that order them between CTAs (PTX ISA
// 8, "Memory Consistency Model"). Contract: pointers are kernel-argument (generic) pointers;
// global() casts one to the .global space, offsets are in bytes; the atomics and the relaxed
// store are emitted as the exact PTX instruction named (inline asm with a memory clobber, so
// LLVM moves no load or store across them).
#pragma once

#include "core/ir/emitter.h"

namespace mgpu::core::ir {

mlir::Value global(Emitter& e, mlir::Value generic_ptr);                         // !llvm.ptr<1>
mlir::Value global_offset(Emitter& e, mlir::Value global_ptr, mlir::Value bytes);  // i32 or i64 bytes
void store_f32x4(Emitter& e, mlir::Value global_ptr, mlir::Value vec4);  // st.global.v4.f32 (weak), 16-aligned
mlir::Value load_f32x4(Emitter& e, mlir::Value global_ptr);             // ld.global.v4.f32 (weak)
// atom.acq_rel.gpu.global.add.u32 (PTX ISA, "Parallel Synchronization and Communication Instructions: atom"): returns the old value. Its write
// heads a release sequence; its read, an acquire, observes every earlier add of the location.
mlir::Value atomic_add_acq_rel_gpu(Emitter& e, mlir::Value global_ptr, mlir::Value i32);
// st.relaxed.gpu.global.u32 (PTX ISA, "Data Movement and Conversion Instructions: st"): a strong store.
void store_relaxed_gpu(Emitter& e, mlir::Value global_ptr, mlir::Value i32);
// Plain shared-memory u32 load and store (ld/st.shared.u32).
void store_shared_u32(Emitter& e, mlir::Value smem_ptr, mlir::Value i32);
mlir::Value load_shared_u32(Emitter& e, mlir::Value smem_ptr);

}  // namespace mgpu::core::ir
