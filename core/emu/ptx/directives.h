// Which modules the virtual device runs, by their .version and .target: the targets sm_90a and
// sm_100a, the plain targets a driver JIT-compiles for them (sm_50 .. sm_90, sm_100: PTX for
// sm_80 runs on an H100), and PTX ISA up to 9.0 (CUDA 13.0's, the newest its own tests' PTX is
// written in), never older than its target (PTX 7.0 has no sm_90a). A module for another target (sm_120a) or of a newer PTX ISA
// was run as sm_90a and called clean; a CUDA driver and ptxas refuse such a module, and a verdict
// here would say nothing of the target it names. Contract: check_directives() returns nullopt for
// a module the device runs, else which directive is wrong and why (one sentence, no file name).
#pragma once

#include <optional>
#include <string>

#include "core/emu/ptx/module.h"

namespace mgpu::emu::ptx {

struct DirectiveProblem {
  bool version = false;  // the .version (missing, malformed, newer than implemented, older than the target)
  std::string message;
};

std::optional<DirectiveProblem> check_directives(const Module& m);

}  // namespace mgpu::emu::ptx
