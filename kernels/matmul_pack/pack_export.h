// A matmul's part of a kernel pack (export --format pack): its kernels and the C table that
// kernels/matmul_pack/pack_matmul.c selects from. Contract: matmul_pack_kernel() builds and
// compiles `c` at `p` with the template of its arch and describes the result: maps A, B, C in
// that order, by the roles the runtime gives them (A rows M cols K; B rows K cols N for kn, rows
// N cols K for nk; C rows M cols N), checked against the extents the template built (an
// Error{Internal} when a template's maps are other than that: the runtime would encode them
// wrongly). matmul_pack_table_c() is the C source of mgpu_pk_matmul() over `entries`.
#pragma once

#include <string>
#include <vector>

#include "core/compiler.h"
#include "core/tuning_config.h"
#include "kernels/matmul_template.h"
#include "kernels/pack_kernel.h"

namespace mgpu::kernels {

PackKernel matmul_pack_kernel(const MatmulTemplate& t, const MatmulProblem& p, const core::TuningConfig& c,
                              const core::CompileOptions& options);

struct MatmulPackEntry {
  int info = 0;    // its index among the pack's entry infos
  int kernel = 0;  // its index among the pack's kernels
  mgpu_lm_matmul consts{};
  MatmulProblem problem;  // where it was tuned (a default's: the problem it was built at)
  bool is_default = false;
};

std::string matmul_pack_table_c(const std::vector<MatmulPackEntry>& entries);

// The dtype/layout combinations a pack offers a default for: every one the template of `arch`
// accepts (its check_problem at a small problem).
std::vector<MatmulProblem> matmul_pack_default_problems(const MatmulTemplate& t);

}  // namespace mgpu::kernels
