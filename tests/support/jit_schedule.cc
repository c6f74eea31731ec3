#include "tests/support/jit_schedule.h"

#include "core/ir/emitter.h"
#include "core/mlir_context.h"
#include "kernels/matmul_common/tile_walk.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "tests/support/jit_host.h"

namespace mgpu::testing {

struct JitSchedule::Impl {
  std::unique_ptr<mlir::MLIRContext> ctx;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

JitSchedule::JitSchedule() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = core::make_mlir_context();
  mlir::MLIRContext& ctx = *impl_->ctx;
  mlir::OpBuilder b(&ctx);
  mlir::Location loc = b.getUnknownLoc();
  auto module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto i32 = b.getI32Type(), i64 = b.getI64Type();
  auto fn = mlir::func::FuncOp::create(b, loc, "schedule", b.getFunctionType({i32, i32, i32, i32, i32}, {i64}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  mlir::Block* body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  core::ir::Emitter e{b, loc};
  auto args = body->getArguments();
  kernels::TileCoord tc = kernels::emit_planar_snake(e, args[0], args[1], args[2], args[3], args[4]);
  mlir::Value packed = mlir::arith::OrIOp::create(
      b, loc, mlir::arith::ShLIOp::create(b, loc, e.zext64(tc.m), e.c64(32)), e.zext64(tc.n));
  mlir::func::ReturnOp::create(b, loc, packed);

  impl_->engine = jit_host_module(module, "the schedule");
}

JitSchedule::~JitSchedule() = default;

std::pair<std::int32_t, std::int32_t> JitSchedule::operator()(std::int32_t t, std::int32_t m_tiles, std::int32_t n_tiles,
                                                               std::int32_t minor_is_n, std::int32_t band_width) const {
  std::int64_t packed = 0;
  llvm::Error err = impl_->engine->invoke("schedule", t, m_tiles, n_tiles, minor_is_n, band_width,
                                          mlir::ExecutionEngine::result(packed));
  if (err) throw std::runtime_error("schedule call failed: " + llvm::toString(std::move(err)));
  return {static_cast<std::int32_t>(packed >> 32), static_cast<std::int32_t>(packed & 0xffffffff)};
}

}  // namespace mgpu::testing
