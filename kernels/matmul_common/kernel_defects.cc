#include "kernels/matmul_common/kernel_defects.h"

namespace mgpu::kernels {

KernelDefects defects_of(const core::KernelEvidence& k) {
  KernelDefects d;
  d.known = true;
  for (const core::Lint& l : core::lints(k)) {
    if (l.code == "setmaxnreg-dropped") d.setmaxnreg_dropped = true;
    else if (l.code == "serialised-mma")
      // The same test lints() makes for the main loop: more than the fences and waits its PTX has.
      d.serialised_mma = core::main_loop_syncs_added(k) ? KernelDefects::Serialised::EveryStep
                                                       : KernelDefects::Serialised::FirstStep;
    else if (l.code == "spills") d.spill_bytes = k.spill_store_bytes;
    else if (l.code == "local-memory-in-main-loop") d.main_loop_local_ops = k.sass.main_loop.local_memory;
    else if (l.code == "membar-in-main-loop") d.main_loop_membars = k.sass.main_loop.wide_membar;
    else if (l.code == "bank-conflicts") d.epilogue_bank_ways = k.bank_conflicts->ways();
  }
  return d;
}

}  // namespace mgpu::kernels
