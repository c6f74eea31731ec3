// The SASS evidence of one compiled kernel (issue 19), gathered once and kept. Contract:
// evidence_of() disassembles the unit's cubin (nvdisasm: Error{Unavailable} without it, as
// disassemble() throws) and reads the assembler's log, the kernel's spills and the PTX's
// setmaxnreg and main-loop wgmma fences and waits (ptx_main_loop.h); it leaves bank_conflicts empty (a verification counts those). evidence_json()
// and evidence_from_json() round-trip the SASS part as JSON text (the results store keeps it
// so); a field missing from the text takes its default, so a record written before a field
// existed still reads; unreadable text throws Error{InvalidInput}. lints_json() is the
// [{"code", "message"}] array every command prints. sass_counts_json() and
// register_budgets_json() are the JSON of those parts, the same in the store and in every
// command's --json.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/compile_cache.h"
#include "core/sass/performance_lints.h"

namespace mgpu::core {

KernelEvidence evidence_of(const CompiledUnit& unit, const std::string& kernel_name);

std::string evidence_json(const KernelEvidence& k);
KernelEvidence evidence_from_json(std::string_view text);
std::string lints_json(const std::vector<Lint>& lints);
nlohmann::json sass_counts_json(const SassCounts& c);
nlohmann::json register_budgets_json(const std::vector<RegisterBudget>& budgets);

}  // namespace mgpu::core
