// The helper every MGPU primitive is written against: an OpBuilder and a location, plus the
// constants, integer arithmetic and thread indices that kernel code needs at every turn.
// Contract: all values it makes are i32 (the width PTX uses for indices and barrier phases)
// unless a name says otherwise; arithmetic folds nothing itself (MLIR's canonicalizer does).
#pragma once

#include <functional>

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mgpu::core::ir {

struct Emitter {
  mlir::OpBuilder& b;
  mlir::Location loc;

  mlir::Type i1() const;
  mlir::Type i32() const;
  mlir::Type i64() const;
  mlir::Type smem_ptr_type() const;    // !llvm.ptr<3>
  mlir::Type global_ptr_type() const;  // !llvm.ptr (generic; kernel arguments)

  mlir::Value c32(int64_t v);
  mlir::Value c64(int64_t v);
  mlir::Value index(int64_t v);
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);  // unsigned
  mlir::Value rem(mlir::Value a, mlir::Value b);  // unsigned
  mlir::Value bit_and(mlir::Value a, mlir::Value b);
  mlir::Value bit_xor(mlir::Value a, mlir::Value b);
  mlir::Value shl(mlir::Value a, mlir::Value b);
  mlir::Value shr(mlir::Value a, mlir::Value b);  // logical
  mlir::Value eq(mlir::Value a, mlir::Value b);
  mlir::Value ult(mlir::Value a, mlir::Value b);
  mlir::Value to_i32(mlir::Value index_value);
  mlir::Value to_index(mlir::Value i32_value);
  mlir::Value zext64(mlir::Value v);

  mlir::Value thread_idx();  // threadIdx.x, i32
  mlir::Value block_idx(int dim);  // blockIdx.{x,y,z}, i32
  mlir::Value grid_dim(int dim);
  mlir::Value warp_idx();       // threadIdx.x / 32, made warp-uniform
  mlir::Value lane_idx();       // threadIdx.x % 32
  mlir::Value warpgroup_idx();  // threadIdx.x / 128, made warp-uniform

  // scf.if without results: `then` emits the guarded code.
  void if_then(mlir::Value cond, const std::function<void()>& then);
  // scf.if with results: `then` and `otherwise` each return values of `types` (a uniform
  // branch choosing between two computations, e.g. a masked and an unmasked tile).
  llvm::SmallVector<mlir::Value> if_else(mlir::Value cond, mlir::TypeRange types,
                                         const std::function<llvm::SmallVector<mlir::Value>()>& then,
                                         const std::function<llvm::SmallVector<mlir::Value>()>& otherwise);
  void barrier_sync();  // bar.sync 0 across the CTA
  void named_barrier(int id, int threads);  // bar.sync id, threads (id 0 is barrier_sync's)
  void named_barrier(mlir::Value id, int threads);  // the same with a (warp-uniform) i32 id
  void named_barrier_arrive(mlir::Value id, int threads);  // bar.arrive id, threads: counts, never waits
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b);
  mlir::Value ceil_div(mlir::Value a, mlir::Value b);  // unsigned
  // scf.for over i32 [lb, ub) with loop-carried values; `body(iv, carried)` returns the
  // values for the next iteration. Returns the final carried values.
  llvm::SmallVector<mlir::Value> for_loop(
      mlir::Value lb, mlir::Value ub, mlir::Value step, mlir::ValueRange init,
      const std::function<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::ValueRange)>& body);

  // Byte offset arithmetic on a shared-memory pointer.
  mlir::Value smem_offset(mlir::Value base, int64_t bytes);
  mlir::Value smem_offset(mlir::Value base, mlir::Value bytes_i32);
  mlir::Value smem_address32(mlir::Value smem_ptr);  // the 32-bit shared address (for descriptors)
};

}  // namespace mgpu::core::ir
