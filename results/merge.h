// Combining results databases from several machines. Contract: merge_databases() copies every
// run and trial of each input into `output` (created if absent), keyed by their uuids, so a
// trial already present -- merged before, or the same input twice -- is not duplicated; and
// each input's kernel evidence (schema 7), keyed by kernel, backend and assembler likewise.
// Inputs are opened read-only and never changed. Returns the number of trials added.
// A blank input (what a run killed before it wrote its schema leaves, e.g. a Slurm task
// stopped at its start) holds no trials: it is skipped and named in *blank_inputs, so one
// such shard does not stop a campaign's merge. Any other unusable input stops the merge
// before the output is touched.
// A stop (MergeStop::requested() turning true: Ctrl-C) is heeded between trials: a new output is
// removed (a merge that did not finish leaves no file, as one that failed), an existing one
// keeps the trials committed so far (a merge run again adds the rest: they are keyed by uuid).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mgpu::results {

struct MergeStop {
  std::function<bool()> requested;  // asked between trials
  bool stopped = false;             // set when the merge ended early for it
  bool output_removed = false;      // the output was new and is gone again
  std::int64_t trials_total = 0;    // the inputs' trials (each added or already there)
};

int merge_databases(const std::vector<std::string>& inputs, const std::string& output,
                    std::vector<std::string>* blank_inputs = nullptr, MergeStop* stop = nullptr);

}  // namespace mgpu::results
