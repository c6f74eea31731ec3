#include "core/ir/roles.h"

#include <fmt/format.h>

#include "core/error.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mgpu::core::ir {

void setmaxnreg(Emitter& e, int registers, bool increase) {
  if (registers < 24 || registers > 256 || registers % 8 != 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("setmaxnreg takes a multiple of 8 in [24, 256], got {}", registers));
  mlir::NVVM::SetMaxRegisterOp::create(
      e.b, e.loc, static_cast<uint32_t>(registers),
      increase ? mlir::NVVM::SetMaxRegisterAction::increase : mlir::NVVM::SetMaxRegisterAction::decrease);
}

mlir::Value elect_one(Emitter& e) { return mlir::NVVM::ElectSyncOp::create(e.b, e.loc, e.i1(), mlir::Value()); }

mlir::Value cluster_cta_rank(Emitter& e) { return mlir::NVVM::ClusterId::create(e.b, e.loc, e.i32()); }

mlir::Value cluster_cta_id(Emitter& e, int dim) {
  if (dim == 0) return mlir::NVVM::BlockInClusterIdXOp::create(e.b, e.loc, e.i32());
  if (dim == 1) return mlir::NVVM::BlockInClusterIdYOp::create(e.b, e.loc, e.i32());
  return mlir::NVVM::BlockInClusterIdZOp::create(e.b, e.loc, e.i32());
}

void cluster_arrive(Emitter& e) { mlir::NVVM::ClusterArriveOp::create(e.b, e.loc, e.b.getUnitAttr()); }
void cluster_wait(Emitter& e) { mlir::NVVM::ClusterWaitOp::create(e.b, e.loc, e.b.getUnitAttr()); }
void cluster_sync(Emitter& e) {
  cluster_arrive(e);
  cluster_wait(e);
}

}  // namespace mgpu::core::ir
