// Combining results databases from several machines. Contract: merge_databases() copies every
// run and trial of each input into `output` (created if absent), keyed by their uuids, so a
// trial already present -- merged before, or the same input twice -- is not duplicated; and
// each input's kernel evidence (schema 7), keyed by kernel, backend and assembler likewise.
// Inputs are opened read-only and never changed. Returns the number of trials added.
#pragma once

#include <string>
#include <vector>

namespace mgpu::results {

int merge_databases(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace mgpu::results
