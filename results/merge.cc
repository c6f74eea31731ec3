#include "results/merge.h"

#include <map>

#include "results/output_file.h"
#include "results/store.h"

namespace mgpu::results {

int merge_databases(const std::vector<std::string>& inputs, const std::string& output) {
  // Open every input first: a bad one stops the merge before the output is touched.
  check_database_path(output);
  refuse_database_path(output, inputs, "the input database");
  std::vector<Store> sources;
  for (const std::string& in : inputs) sources.push_back(Store::open(in, OpenMode::ReadOnly));
  Store out = Store::open(output, OpenMode::ReadWrite);
  int added = 0;
  for (Store& src : sources) {
    std::map<std::int64_t, std::int64_t> run_map;
    for (const RunRow& r : src.runs()) run_map[r.id] = out.import_run(r);
    for (const TrialRow& t : src.trials()) added += out.import_trial(t, run_map.at(t.run_id));
    for (const EvidenceRecord& e : src.all_evidence()) out.import_evidence(e);  // kernels' SASS evidence (schema 7)
  }
  return added;
}

}  // namespace mgpu::results
