// What a compiled kernel's performance lints (core/sass/performance_lints.h, issue 19) mean to
// the cost model: each lint turned into the quantity its penalty is computed from. Contract:
// defects_of() is pure and reads only the lints lints() reports for the evidence (a clean
// kernel gives a KernelDefects with known = true and nothing else set); a default
// KernelDefects (known = false) is "no evidence": the prediction is the one without lints.
// "no-main-loop" is a statement about the listing, not a cost: it sets nothing.
#pragma once

#include <string>

#include "core/sass/performance_lints.h"

namespace mgpu::kernels {

struct KernelDefects {
  bool known = false;  // SASS evidence was available for the kernel
  enum class Serialised { None, FirstStep, EveryStep };
  // serialised-mma: only the peeled first k-step of a tile (the assembler says it injected
  // waits, the main loop holds just its fence and wait), or every k-step (the main loop
  // holds more warpgroup arrive/waits than the one fence and one wait a pipelined step needs).
  Serialised serialised_mma = Serialised::None;
  bool setmaxnreg_dropped = false;
  int spill_bytes = 0;            // spills: bytes spilled per thread
  int main_loop_local_ops = 0;    // local-memory-in-main-loop: LDL/STL per main-loop iteration
  int main_loop_membars = 0;      // membar-in-main-loop: GPU-wide MEMBARs per main-loop iteration
  double epilogue_bank_ways = 1;  // bank-conflicts: wavefronts per ideal wavefront (1: none)
  bool any() const {
    return serialised_mma != Serialised::None || setmaxnreg_dropped || spill_bytes > 0 || main_loop_local_ops > 0 ||
           main_loop_membars > 0 || epilogue_bank_ways > 1;
  }
};

KernelDefects defects_of(const core::KernelEvidence& evidence);

}  // namespace mgpu::kernels
