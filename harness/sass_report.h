// The SASS evidence of one kernel (issue 19) as the CLI shows it, shared by `compile matmul
// --sass` and `sass CUBIN` so that both print the same JSON fields and the same line.
// Contract: sass_evidence_json() holds function, whole (counts), main_loop and epilogue (counts;
// each only when found), setmaxnreg_kept, register_budgets (setmaxnreg per role as assembled:
// [{raise, registers}]), advisories, lints (code + message each) and, when the PTX was read,
// ptx_main_loop_warpgroup_sync (the wgmma fences and waits its main loop asked for);
// sass_line() renders that object as one indented "sass: ..." line plus one line per lint.
// require_nvdisasm() throws Error{InvalidInput} naming where nvdisasm was looked for and how
// to get it (Error{Unavailable} when MGPU_NVDISASM names no executable), so a command can fail
// before doing any work.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/sass/performance_lints.h"

namespace mgpu::harness {

nlohmann::json sass_evidence_json(const core::KernelEvidence& k);
std::string sass_line(const nlohmann::json& evidence);
void require_nvdisasm(const std::string& what_needs_it);

}  // namespace mgpu::harness
