#include "results/merge.h"

#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "results/database.h"
#include "results/output_file.h"
#include "results/store.h"
#include "results/stored_config.h"

namespace mgpu::results {

int merge_databases(const std::vector<std::string>& inputs, const std::string& output,
                    std::vector<std::string>* blank_inputs, MergeStop* stop) {
  // Open every input first: a bad one stops the merge before the output is touched.
  check_database_path(output);
  refuse_database_path(output, inputs, "the input database");
  // One file given twice (by name, symlink or hard link) would be read by two connections at
  // once, and neither could remove the -wal/-shm they made: refused, as nothing it adds.
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (std::size_t j = i + 1; j < inputs.size(); ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(inputs[i], inputs[j], ec) && !ec)
        throw core::Error(core::ErrorKind::InvalidInput,
                          inputs[i] == inputs[j]
                              ? "the input database " + inputs[i] + " is given twice: give each input once"
                              : "the input databases " + inputs[i] + " and " + inputs[j] +
                                    " are the same file: give each input once");
    }
  std::vector<Store> sources;
  for (const std::string& in : inputs) {
    // A missing input is refused by open(); a blank one holds nothing to merge.
    std::optional<Store> s = std::filesystem::exists(in) ? Store::open_earlier(in) : Store::open(in, OpenMode::ReadOnly);
    if (s) sources.push_back(std::move(*s));
    else if (blank_inputs) blank_inputs->push_back(in);
  }
  // Every input's trials are read before the output is opened too: a damaged row (a trial whose
  // config or environment row is not there) stops the merge before anything is written.
  std::vector<std::vector<TrialRow>> trials;
  // So is a config that is not a JSON object of ints and strings (the rule every reader applies):
  // copied, it would make the merged database "damaged" for best, export and report.
  for (Store& src : sources) {
    trials.push_back(src.trials());
    for (const TrialRow& t : trials.back()) stored_config_text(src.path(), t.id, t.config_json);
  }
  if (stop)
    for (const auto& ts : trials) stop->trials_total += static_cast<std::int64_t>(ts.size());
  auto stopping = [&] { return stop && stop->requested && stop->requested(); };
  NewDatabaseGuard created(output);  // a new output is not left behind by a merge that failed
  int added = 0;
  {
    Store out = Store::open(output, OpenMode::ReadWrite);
    for (size_t i = 0; i < sources.size() && !stopping(); ++i) {
      Store& src = sources[i];
      std::map<std::int64_t, std::int64_t> run_map;
      for (const RunRow& r : src.runs()) run_map[r.id] = out.import_run(r);
      for (const TrialRow& t : trials[i]) {
        if (stopping()) break;
        added += out.import_trial(t, run_map.at(t.run_id));
      }
      if (stopping()) break;
      for (const EvidenceRecord& e : src.all_evidence()) out.import_evidence(e);  // kernels' SASS evidence (schema 7)
    }
  }  // closed before a new output is removed
  if (stopping()) {
    stop->stopped = true;
    stop->output_removed = created.created();
    return stop->output_removed ? 0 : added;
  }
  created.keep();
  return added;
}

}  // namespace mgpu::results
