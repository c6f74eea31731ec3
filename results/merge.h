// Combining results databases from several machines. Contract: merge_databases() copies every
// run and trial of each input into `output` (created if absent), keyed by their uuids, so a
// trial already present -- merged before, or the same input twice -- is not duplicated; and
// each input's kernel evidence (schema 7), keyed by kernel, backend and assembler likewise.
// Inputs are opened read-only and never changed. Returns the number of trials added.
// A blank input (what a run killed before it wrote its schema leaves, e.g. a Slurm task
// stopped at its start) holds no trials: it is skipped and named in *blank_inputs, so one
// such shard does not stop a campaign's merge. Any other unusable input stops the merge
// before the output is touched.
#pragma once

#include <string>
#include <vector>

namespace mgpu::results {

int merge_databases(const std::vector<std::string>& inputs, const std::string& output,
                    std::vector<std::string>* blank_inputs = nullptr);

}  // namespace mgpu::results
