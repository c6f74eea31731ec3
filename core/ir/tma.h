// TMA: bulk tensor copies between global memory and SMEM, driven by a CUtensorMap descriptor
// that the host encodes (runtime/tensor_map) and passes to the kernel as a pointer in global
// memory. Contract: coordinates are i32 element indices, innermost dimension first, as the
// descriptor declares them; a load completes on `barrier` (which must expect its bytes);
// a non-null `multicast_mask` (i16) delivers the same tile to every CTA of the cluster whose
// bit is set, at the same SMEM offset. Stores are grouped: store_commit() closes a group and
// store_wait(n) waits until at most n groups are pending.
#pragma once

#include "core/ir/emitter.h"

namespace mgpu::core::ir {

void tma_load(Emitter& e, mlir::Value descriptor, mlir::Value dst_smem, mlir::Value barrier,
              llvm::ArrayRef<mlir::Value> coords, mlir::Value multicast_mask = {}, bool two_cta = false);
void tma_store(Emitter& e, mlir::Value descriptor, mlir::Value src_smem, llvm::ArrayRef<mlir::Value> coords);
void tma_store_commit(Emitter& e);
void tma_store_wait(Emitter& e, int max_pending, bool read_only);
void tma_prefetch_descriptor(Emitter& e, mlir::Value descriptor);
// fence.proxy.async.shared::cta: generic-proxy SMEM writes become visible to TMA (async proxy).
void fence_proxy_async_shared(Emitter& e);

}  // namespace mgpu::core::ir
