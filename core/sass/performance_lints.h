// Performance lints of one compiled kernel (issue 19): what its machine code and its
// assembler's log show that separates a slow kernel from a clean one, each with a code and a
// sentence. Contract: lints() is pure; it returns nothing for a clean kernel, and one lint per
// defect, in a fixed order: setmaxnreg dropped, serialised MMAs, spills, local memory in the
// main loop, no main loop found.
#pragma once

#include <string>
#include <vector>

#include "core/sass/sass_profile.h"

namespace mgpu::core {

struct KernelEvidence {
  SassProfile sass;
  std::vector<std::string> advisories;  // the assembler's (Cnnnn) codes (assembler_advisories)
  int spill_store_bytes = 0;
  bool ptx_has_setmaxnreg = false;      // the kernel asks for a register split
};

struct Lint {
  std::string code;     // e.g. "setmaxnreg-dropped"
  std::string message;  // what was seen, with the evidence
};

std::vector<Lint> lints(const KernelEvidence& k);

}  // namespace mgpu::core
