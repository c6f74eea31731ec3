// Warp-specialization and cluster primitives: register reallocation between warpgroup roles
// (setmaxnreg: producers give registers up, consumers take them), electing one thread of a
// warp, and the cluster's CTA rank and barrier. Contract: setmaxnreg counts are multiples of 8
// in [24, 256] and must be executed by every thread of the warpgroup; cluster_sync() is
// arrive + wait by every thread of every CTA in the cluster.
#pragma once

#include "core/ir/emitter.h"

namespace mgpu::core::ir {

void setmaxnreg(Emitter& e, int registers, bool increase);
mlir::Value elect_one(Emitter& e);        // i1: true on exactly one lane of the warp
mlir::Value cluster_cta_rank(Emitter& e);  // i32: %cluster_ctarank
mlir::Value cluster_cta_id(Emitter& e, int dim);  // i32: %cluster_ctaid.{x,y,z}
void cluster_arrive(Emitter& e);
void cluster_wait(Emitter& e);
void cluster_sync(Emitter& e);

}  // namespace mgpu::core::ir
