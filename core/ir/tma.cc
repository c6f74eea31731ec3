#include "core/ir/tma.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mgpu::core::ir {

using mlir::Value;

void tma_load(Emitter& e, Value descriptor, Value dst_smem, Value barrier, llvm::ArrayRef<Value> coords,
              Value multicast_mask, bool two_cta) {
  // The instruction addresses shared::cluster: cast the CTA-local pointer (addrspace 3 -> 7).
  auto cluster_ptr = mlir::LLVM::LLVMPointerType::get(e.b.getContext(), 7);
  Value dst = mlir::LLVM::AddrSpaceCastOp::create(e.b, e.loc, cluster_ptr, dst_smem);
  mlir::NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      e.b, e.loc, dst, descriptor, coords, barrier, mlir::ValueRange(), multicast_mask, Value(),
      mlir::NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
      two_cta ? mlir::NVVM::CTAGroupKindAttr::get(e.b.getContext(), mlir::NVVM::CTAGroupKind::CTA_2)
              : mlir::NVVM::CTAGroupKindAttr(),
      Value());
}

void tma_store(Emitter& e, Value descriptor, Value src_smem, llvm::ArrayRef<Value> coords) {
  mlir::NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(e.b, e.loc, descriptor, src_smem, coords, Value(),
                                                           mlir::NVVM::TMAStoreMode::TILE, Value());
}

void tma_store_commit(Emitter& e) { mlir::NVVM::CpAsyncBulkCommitGroupOp::create(e.b, e.loc); }

void tma_store_wait(Emitter& e, int max_pending, bool read_only) {
  mlir::NVVM::CpAsyncBulkWaitGroupOp::create(e.b, e.loc, static_cast<uint32_t>(max_pending),
                                             read_only ? e.b.getUnitAttr() : mlir::UnitAttr());
}

void tma_prefetch_descriptor(Emitter& e, Value descriptor) {
  mlir::NVVM::PrefetchOp::create(e.b, e.loc, mlir::NVVM::PrefetchCacheLevelAttr(),
                                 mlir::NVVM::CacheEvictionPriorityAttr(), descriptor, Value(),
                                 /*tensormap=*/true);
}

void fence_proxy_async_shared(Emitter& e) {
  mlir::NVVM::FenceProxyOp::create(e.b, e.loc, mlir::NVVM::ProxyKind::async_shared,
                                   mlir::NVVM::SharedSpaceAttr::get(e.b.getContext(), mlir::NVVM::SharedSpace::shared_cta));
}

}  // namespace mgpu::core::ir
