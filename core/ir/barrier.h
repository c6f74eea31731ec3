// mbarrier rings: the synchronization of a `max_concurrent_steps`-deep pipeline, with the
// slot/phase bookkeeping done once, here. Step s uses slot s % depth and waits for parity
// (s / depth) & 1: each slot's barrier completes once per trip around the ring, flipping its
// phase. Contract: the ring occupies bytes(depth) of SMEM at `base` (8-byte aligned);
// init() must run on one thread, and be followed by fence_barrier_init() and a CTA barrier
// before any other thread touches the ring.
#pragma once

#include "core/ir/emitter.h"
#include "core/ir/smem_plan.h"

namespace mgpu::core::ir {

struct SlotPhase {
  mlir::Value slot;    // i32
  mlir::Value parity;  // i32, 0 or 1
};

class BarrierRing {
 public:
  BarrierRing(mlir::Value base, int depth) : base_(base), depth_(depth) {}
  static std::int64_t bytes(int depth) { return BarrierRingBytes(depth); }
  static SlotPhase slot_phase(Emitter& e, mlir::Value step, int depth);

  int depth() const { return depth_; }
  mlir::Value slot_ptr(Emitter& e, mlir::Value slot) const;
  void init(Emitter& e, int arrival_count) const;
  void arrive(Emitter& e, mlir::Value slot) const;
  // Arrive on the same slot's barrier in the cluster CTA of rank `cta_rank` (mapa + a
  // cluster-scope arrive): how a consumer releases a stage its peer multicasts into.
  // Release: the arrival orders the caller's earlier memory accesses before the waiter's
  // (.release.cluster, which ptxas makes a MEMBAR.ALL.GPU: it waits for every outstanding
  // access of the thread). Relaxed: a signal only (.relaxed.cluster, PTX ISA 8.6), for a caller
  // whose handed-over accesses have all completed already -- a stage read by wgmma after
  // wgmma.wait_group, TMEM read after tcgen05.wait::ld (PTX ISA 9.7.13.15.13, mbarrier.arrive).
  enum class Order { Release, Relaxed };
  void arrive_remote(Emitter& e, mlir::Value slot, mlir::Value cta_rank, Order order) const;
  // Arrive and announce `bytes` of asynchronous (TMA) traffic that will complete this phase.
  void arrive_expect_tx(Emitter& e, mlir::Value slot, std::int64_t bytes) const;
  // Block until the barrier of `slot` has completed the phase of the given parity.
  void wait(Emitter& e, mlir::Value slot, mlir::Value parity) const;
  void wait_step(Emitter& e, mlir::Value step) const;

 private:
  mlir::Value base_;
  int depth_;
};

// The same SMEM object in the even CTA of a 2-CTA pair, as a shared::cta pointer: bit 24 of
// a shared address is the CTA's rank within the pair, so clearing it names the leader's copy.
// This is the form cta_group::2 operations (TMA loads completing on the leader's barrier)
// take; CUTLASS's Sm100MmaPeerBitMask does the same.
mlir::Value pair_leader_address(Emitter& e, mlir::Value smem_ptr);

// fence.mbarrier_init: makes barrier initialization visible to the async proxy and cluster.
void fence_barrier_init(Emitter& e);

}  // namespace mgpu::core::ir
