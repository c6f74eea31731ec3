// A stored kernel's performance lints (issue 19), as best, the report and the tuning loop show
// and use them: its SASS evidence as recorded (Store::evidence, by kernel hash and backend),
// with the shared-memory bank conflicts of its latest passing verification on the virtual
// device (Store::passing_verification_message) -- read from the records, never recomputed.
// Contract: `sass` says whether SASS evidence was recorded, `verified` whether a passing
// verification was (its bank conflicts were counted; a verification that found none is a
// clean count); `lints` is core::lints() over what is there. lints_text() is one short cell:
// "not recorded" when neither is, else the codes ("none" when clean; bank-conflicts with its
// ways), and what was missing: "(no SASS evidence)", "(banks not counted)".
#pragma once

#include <string>
#include <vector>

#include "core/sass/performance_lints.h"
#include "results/store.h"

namespace mgpu::results {

struct KernelLints {
  bool sass = false, verified = false;
  core::KernelEvidence evidence;  // SASS part when `sass`; bank_conflicts when counted and any
  std::vector<core::Lint> lints;
  bool recorded() const { return sass || verified; }
};

KernelLints kernel_lints(Store& store, const std::string& kernel_hash, const std::string& backend_hash);
inline KernelLints kernel_lints(Store& store, const TrialRow& row) {
  return kernel_lints(store, row.kernel_hash, row.tmpl.backend_hash);
}
std::string lints_text(const KernelLints& k);

}  // namespace mgpu::results
