// The best configs with their verification, as best, export, mgpu-bench and the report show
// them (issue 17). Contract: rows are Store::best()'s, each labelled by verification_label()
// ("hardware", "virtual" or "none"; "failed" rows never rank and come back in `failed`
// instead). require_verified() refuses -- Error{WrongResult}, exit 1: the work failed, nothing
// is written by the caller -- when any row is neither hardware- nor virtually verified, and
// names how many rows and which configs.
#pragma once

#include <string>
#include <vector>

#include "results/store.h"

namespace mgpu::results {

struct LabelledRow {
  TrialRow row;
  std::string verification;  // hardware | virtual | none
};

struct VerifiedBest {
  std::vector<LabelledRow> rows;
  std::vector<TrialRow> failed;  // ok rows skipped: the virtual device failed their kernel
};

VerifiedBest verified_best(Store& store, bool include_model, const std::vector<TemplateId>& current = {});

// One row's label (verification_label() of the virtual device's verdicts for its key).
std::string verification_of(Store& store, const TrialRow& row);

void require_verified(const VerifiedBest& best);

// "N rows skipped: failed verification on the virtual device (K configs: CONFIG at CLASS:
// STATUS; ...)"; empty when nothing was skipped.
std::string skipped_note(Store& store, const std::vector<TrialRow>& failed);

}  // namespace mgpu::results
