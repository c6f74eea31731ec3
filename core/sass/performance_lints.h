// Performance lints of one compiled kernel (issue 19): what its machine code and its
// assembler's log show that separates a slow kernel from a clean one -- and, when a
// verification on the virtual device counted them, its shared-memory bank conflicts -- each
// with a code and a sentence. Contract: lints() is pure; it returns nothing for a clean kernel,
// and one lint per defect, in a fixed order: setmaxnreg-dropped, serialised-mma, spills,
// local-memory-in-main-loop, membar-in-main-loop, no-main-loop, bank-conflicts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/sass/bank_conflicts.h"
#include "core/sass/sass_profile.h"

namespace mgpu::core {

struct KernelEvidence {
  SassProfile sass;
  std::vector<std::string> advisories;  // the assembler's (Cnnnn) codes (assembler_advisories)
  int spill_store_bytes = 0;
  bool ptx_has_setmaxnreg = false;      // the kernel asks for a register split
  // Not from the SASS: a verification's count (parse_bank_conflicts of its stored message).
  std::optional<SharedBankConflicts> bank_conflicts;
  // The wgmma fences and waits the PTX's own main loop holds (ptx_main_loop.h): what the
  // template asked for; unknown (older evidence, `sass` without --ptx, no PTX loop found): the
  // main loop's count is not judged (only the assembler's own advisories are).
  std::optional<int> ptx_main_loop_warpgroup_sync;
};

struct Lint {
  std::string code;     // e.g. "setmaxnreg-dropped"
  std::string message;  // what was seen, with the evidence
};

std::vector<Lint> lints(const KernelEvidence& k);
// The serialised-mma test of the main loop alone: its SASS holds more warpgroup arrives/waits
// than its PTX asked for (the assembler serialised what the template pipelined); false when the
// PTX's count is unknown.
bool main_loop_syncs_added(const KernelEvidence& k);

}  // namespace mgpu::core
