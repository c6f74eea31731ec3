// The nightly suite: the (template, arch, problem, config) entries production uses, of every op
// (matmul, and the ops of kernels/op_registry.h), read from
// a results database (its current best verified, measured config per template, problem and
// device) or from a JSON export (`mgpu-tune export --format json`: a folder or one file).
// Contract: entries come back in a stable order (template, then problem key), each named
// "TEMPLATE/PROBLEM_KEY" -- the Google Benchmark name a filter matches; an entry is listed
// once per (template, problem) even if several devices were tuned (the device that runs the
// suite is the one that matters tonight): a measured config before a predicted one, then the
// first device by name -- from a database and from an export folder alike, never by file name. Unreadable or malformed input throws
// Error{InvalidInput} naming the file and what is wrong. Each entry carries its config's
// verification (results/verified_best.h; an export without one reads "none"); a config the
// virtual device failed is never in the suite (`skipped_note` says how many rows were left out).
#pragma once

#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "results/store.h"

namespace mgpu::harness {

struct SuiteEntry {
  std::string name;           // "matmul_sm90/m4096_n4096_k4096_bf16_bf16_kn"
  std::string template_name;
  std::string arch;           // "sm_90a"
  // Any op's problem as the store records it (problem.kernel is the op; its key, fields and
  // flops), checked against the op's template and rebuilt from the key when read.
  results::ProblemRecord problem;
  core::TuningConfig config;
  std::string tuned_on;       // the device the config was tuned on
  std::string verification;   // hardware | virtual | none
  bool measured = false;      // timed on a GPU (source cuda), not predicted
  int pack_index = -1;        // mgpu-bench --pack: the entry's index in the pack (pack_suite.h)
};

// Why suite_from_database(db_path, include_model) is empty, in one sentence naming what the
// database does hold: measured configs only of earlier template versions, only predictions of
// the current ones, or nothing verified at all.
struct NoSuite {
  std::string why;
  bool only_predicted = false;  // the current templates' configs are predicted, none measured anywhere
};
NoSuite why_no_suite(const std::string& db_path, bool include_model);
std::vector<SuiteEntry> suite_from_database(const std::string& db_path, bool include_model,
                                            std::string* skipped_note = nullptr);
// The export files suite_from_export(path) reads: `path` itself, or a folder's *.json files in
// order (Error{InvalidInput} for a folder holding none) -- what an output must not overwrite.
std::vector<std::string> export_files(const std::string& path);
std::vector<SuiteEntry> suite_from_export(const std::string& path);

}  // namespace mgpu::harness
