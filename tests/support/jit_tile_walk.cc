#include "tests/support/jit_tile_walk.h"

#include "core/ir/emitter.h"
#include "core/mlir_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "tests/support/jit_host.h"

namespace mgpu::testing {

struct JitTileWalk::Impl {
  std::unique_ptr<mlir::MLIRContext> ctx;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

JitTileWalk::JitTileWalk(const kernels::TileWalkShape& shape) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = core::make_mlir_context();
  mlir::MLIRContext& ctx = *impl_->ctx;
  mlir::OpBuilder b(&ctx);
  mlir::Location loc = b.getUnknownLoc();
  auto module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto i32 = b.getI32Type(), i64 = b.getI64Type();
  // walk(M, N, block, grid, rank, minor_is_n, band_width, splits, k_steps, iter, field): iter < 0
  // asks for count(), else field f of unit(iter): 0 m0 << 32 | n0, 1 split, 2 k_first,
  // 3 k_count, 4 segments, 5 its own slot, 6 tile.
  auto fn = mlir::func::FuncOp::create(
      b, loc, "walk", b.getFunctionType({i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32}, {i64}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  mlir::Block* body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  core::ir::Emitter e{b, loc};
  auto a = body->getArguments();
  kernels::TileWalk walk(e, shape, a[0], a[1], a[2], a[3], a[4], a[5], a[6], shape.splits > 1 ? a[7] : mlir::Value(), a[8]);
  mlir::Value iter = a[9], field = a[10];
  kernels::WorkUnit u = walk.unit(e, iter);
  auto shl = [&](mlir::Value v, int bits) { return mlir::arith::ShLIOp::create(b, loc, e.zext64(v), e.c64(bits)); };
  mlir::Value values[] = {mlir::arith::OrIOp::create(b, loc, shl(u.m0, 32), e.zext64(u.n0)), e.zext64(u.split),
                          e.zext64(u.k_first), e.zext64(u.k_count), e.zext64(u.segments),
                          e.zext64(u.slot(e, u.split)), e.zext64(u.tile)};
  mlir::Value result = values[0];
  for (int f = 1; f < 7; ++f) result = e.select(e.eq(field, e.c32(f)), values[f], result);
  mlir::Value wants_count = mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::slt, iter, e.c32(0));
  mlir::func::ReturnOp::create(b, loc, e.select(wants_count, e.zext64(walk.count()), result));

  impl_->engine = jit_host_module(module, "the tile walk");
}

JitTileWalk::~JitTileWalk() = default;

namespace {
std::int64_t call(mlir::ExecutionEngine& engine, const WalkArgs& a, std::int32_t iter, std::int32_t field = 0) {
  std::int64_t packed = 0;
  llvm::Error err = engine.invoke("walk", a.m, a.n, a.block, a.grid, a.rank, a.minor_is_n, a.band_width, a.splits,
                                  a.k_steps, iter, field, mlir::ExecutionEngine::result(packed));
  if (err) throw std::runtime_error("tile walk call failed: " + llvm::toString(std::move(err)));
  return packed;
}
}  // namespace

std::int32_t JitTileWalk::count(const WalkArgs& a) const { return static_cast<std::int32_t>(call(*impl_->engine, a, -1)); }

std::pair<std::int32_t, std::int32_t> JitTileWalk::origin(const WalkArgs& a, std::int32_t iter) const {
  kernels::HostUnit u = unit(a, iter);
  return {static_cast<std::int32_t>(u.m0), static_cast<std::int32_t>(u.n0)};
}

kernels::HostUnit JitTileWalk::unit(const WalkArgs& a, std::int32_t iter) const {
  const std::uint64_t packed = static_cast<std::uint64_t>(call(*impl_->engine, a, iter));
  kernels::HostUnit u;
  u.m0 = static_cast<std::int64_t>(packed >> 32);
  u.n0 = static_cast<std::int64_t>(packed & 0xffffffff);
  auto field = [&](int f) { return static_cast<std::uint32_t>(call(*impl_->engine, a, iter, f)); };
  u.split = static_cast<int>(field(1));
  u.k_first = field(2);
  u.k_count = field(3);
  u.segments = static_cast<int>(field(4));
  u.slot = field(5);
  u.tile = field(6);
  return u;
}

}  // namespace mgpu::testing
