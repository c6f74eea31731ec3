// Exporting results for production and spreadsheets. Contract: only measured ("cuda"),
// verified, ok results are exported unless include_model (then predictions too, marked by
// their source); only current template versions when `current` is given.
//   json: a folder with one file per (device, template) -- like Tokamax's autotuning cache --
//         keyed by problem, each entry the config with its time and provenance;
//   cpp:  one self-contained header: per op a problem struct (matmul's is `Shape`, another op's
//         `Problem_<op>`, its fields in the op's order), per template and arch a constexpr table
//         keyed by problem, a lookup with exact match, nearest-problem fallback (same text and
//         switch fields and exact fields, smallest product of the other numbers' size ratios)
//         and a default config;
//         every `declared` template
//         gets its struct and lookup (returning nullptr, "not found") even with nothing tuned.
//         With `declared` given, only those templates are emitted: rows of any other (imported
//         landscapes of other kernels) are left out, listed in a comment at the header's top,
//         and when they are all there is the export is refused (Error{InvalidInput}, nothing
//         written). Every string from the database is written as an escaped C++ literal;
//         parameter names must be identifiers (not keywords), values integers of int64's range
//         or strings, and every row of a template must have its first row's parameters and
//         types -- else Error{InvalidInput} naming the row (a damaged database), nothing written;
//   csv:  one row per trial, whatever its status, measured only unless include_model; after the
//         matmul's columns, its op and the problem's fields (JSON; "{}" before schema 8).
// A problem is written as problem_json() has it: a matmul's m, n, k, dtypes and layout; another
// op's name ("op") and its fields.
// Verification (results/verified_best.h): json and cpp export verified_best()'s rows -- a row
// the virtual device failed is never exported -- each with its label (json: "verification";
// cpp: the config's `verification` member); csv rows end with their label. With
// require_verified_rows, json and cpp refuse (require_verified(): Error{WrongResult}, nothing
// written, an existing output untouched) when a row is neither hardware- nor virtually verified.
// Files are written atomically (an existing file is replaced whole) and never over the
// store's database or its -wal/-shm, nor over the suite's file when it names one, by name,
// symlink or hard link (refuse_database_path: Error{InvalidInput}, nothing written). A json
// folder the export created is removed again when a write fails (a full disk): no empty
// folder, nor a part of the export, is left behind.
// Each returns the number of entries (json, cpp) or rows (csv) written.
// Coverage: given the problems of a suite, json and cpp also say for each (template, device or
// arch) of the suite's op how every suite problem is served, as the header's lookup serves it --
// "exact" (tuned), "nearest" (the nearest tuned problem of the same text fields and switches --
// a matmul's dtypes and layout -- and the same exact fields -- an attention's head dim --:
// smallest product of the other numbers' size ratios), else "none" (the lookup returns nullptr).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/store.h"

namespace mgpu::results {

nlohmann::json problem_json(const ProblemRecord& p);

// A problem's fields in its op's order, each a number, a string or a switch: a matmul's m, n,
// k, dtype, out_dtype, layout; another op's stored fields (Error{InvalidInput} naming `what`
// when they are no JSON object of such values: a damaged row). What the C++ header's problem
// structs and the nearest-problem rule are made of: problems of one op match on their text and
// switches, and are near by the product of their numbers' size ratios.
using ProblemFields = std::vector<std::pair<std::string, nlohmann::json>>;
ProblemFields problem_fields(const ProblemRecord& p, const std::string& what);

struct Coverage {
  std::string shape;  // problem key of the suite shape
  std::string how;    // exact | nearest | default | none
  std::string entry;  // the tuned shape that serves it
  double size_ratio = 1;
};
struct SuiteShapes {
  std::string name;
  std::vector<ProblemRecord> shapes;
  std::string file;  // what the suite was read from (a file, or a suite's name): an input too
  std::vector<std::string> exact_fields;  // the op's numeric fields a lookup matches exactly (kernel_fields())
};
// How `suite` is served by tuned `entries` (rows of one template and device or arch).
std::vector<Coverage> coverage(const SuiteShapes& suite, const std::vector<TrialRow>& entries);

// A template the C++ header always declares: its name, one config of its space, one problem
// of its op (whose fields make the op's problem struct), and the numeric fields its lookup
// matches exactly (OpTemplate::kernel_fields(): they shape the kernel).
struct DeclaredTemplate {
  std::string name;
  std::string sample_config_json;
  ProblemRecord sample_problem;
  std::vector<std::string> exact_fields;
};

int export_json(Store& store, const std::string& folder, bool include_model, const std::vector<TemplateId>& current = {},
                const SuiteShapes& suite = {}, std::vector<std::string>* files_written = nullptr,
                bool require_verified_rows = false);
int export_cpp(Store& store, const std::string& header_path, bool include_model,
               const std::vector<TemplateId>& current = {}, const SuiteShapes& suite = {},
               const std::vector<DeclaredTemplate>& declared = {}, bool require_verified_rows = false);
int export_csv(Store& store, const std::string& csv_path, bool include_model = false);

}  // namespace mgpu::results
