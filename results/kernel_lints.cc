#include "results/kernel_lints.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/sass/bank_conflicts.h"
#include "core/sass/kernel_evidence.h"

namespace mgpu::results {

KernelLints kernel_lints(Store& store, const std::string& kernel_hash, const std::string& backend_hash) {
  KernelLints k;
  if (kernel_hash.empty()) return k;
  if (std::optional<EvidenceRecord> e = store.evidence(kernel_hash, backend_hash)) {
    try {
      k.evidence = core::evidence_from_json(e->evidence);
      k.sass = true;
    } catch (const core::Error&) {
      // an unreadable record counts as none: the lints say "no SASS evidence"
    }
  }
  if (std::optional<std::string> message = store.passing_verification_message(kernel_hash)) {
    k.verified = true;
    k.evidence.bank_conflicts = core::parse_bank_conflicts(*message);
  }
  // Without SASS evidence the profile is empty, so only the bank count can lint.
  k.lints = core::lints(k.evidence);
  return k;
}

std::string lints_text(const KernelLints& k) {
  if (!k.recorded()) return "not recorded";
  std::string codes;
  for (const core::Lint& l : k.lints) {
    std::string code = l.code;
    if (l.code == "bank-conflicts" && k.evidence.bank_conflicts)
      code += fmt::format(" ({:.1f}-way)", k.evidence.bank_conflicts->ways());
    codes += (codes.empty() ? "" : ", ") + code;
  }
  if (codes.empty()) codes = "none";
  if (!k.sass) codes += " (no SASS evidence)";
  if (!k.verified) codes += " (banks not counted)";
  return codes;
}

}  // namespace mgpu::results
