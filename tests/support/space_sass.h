// Compiling a whole space's kernels and reading their machine code, in batches. nvdisasm costs
// ~0.3 s a run whatever the cubin holds (its start-up: 0.35 s for one kernel, 0.5 s for twenty),
// so reading 7,369 Hopper kernels one at a time was 60% of the space test (and of the CI's time).
// Here each module is lowered by the compiler's own lowering (lower_mlir_to_ptx), the PTX of
// `batch` kernels is joined into one module (each entry renamed), assembled by ptxas as the
// compiler assembles (assemble_with_ptxas, -O3 -v), disassembled once, and the listing and the
// resource report read per function.
//
// Why that is the kernel the compiler builds: ptxas assembles each entry of a module on its own.
// It is checked, not assumed: the first kernel of every batch is also compiled alone by the
// production path (compile_module) and disassembled alone, and its registers, spills, stack and
// instruction listing (labels renumbered) must equal its batch's, else every kernel of the batch
// carries an error saying so. A batch whose assembler log holds any warning or advisory code is
// redone a kernel at a time by compile_module, so each kernel's log is its own.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/arch.h"
#include "core/cubin.h"
#include "core/sass/sass_profile.h"

namespace mgpu::testing {

struct KernelProof {
  std::string error;  // non-empty: it did not compile (or its batch broke the check above): why
  std::string ptx;    // the module's PTX, as the compiler lowered it
  core::KernelResources resources;
  std::string log;  // the assembler's report where it said anything of this kernel, else ""
  core::SassProfile profile;
  bool alone = false;  // assembled by itself (a cross-check, or its batch's log was not clean)
};

// One proof per distinct module text (each holding one gpu.module with one kernel), keyed by
// the text. threads <= 0: one per hardware thread.
std::map<std::string, KernelProof> prove_kernels(const std::vector<const std::string*>& mlir_texts,
                                                 const core::ArchSpec& arch, int batch = 32, int threads = 0);

// A PTX module's entry renamed: `name` and its parameters `name_param_N` become `to`'s.
std::string rename_entry(const std::string& ptx, const std::string& name, const std::string& to);
// One function's part of an nvdisasm listing, with its name, labels and internal subroutines made
// neutral (.L_x_N and $__internal_N_ numbered from 0 in order of appearance) and runs of blanks
// folded: equal for equal machine code wherever it was listed. "" when the listing has no such
// function.
std::string neutral_listing(const std::string& listing, const std::string& function);

}  // namespace mgpu::testing
