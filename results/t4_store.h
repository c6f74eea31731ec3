// T4 files in and out of a results database. Contract:
// - import_t4(): every result of the file becomes a trial of one new run (kind "tune", its
//   arguments saying it was an import), source "imported", under the template `kernel`, the
//   problem `problem` and the device `device` as the caller names them (T4 records none of
//   them); valid results are "ok" with the median runtime, min, mean and every run as samples,
//   failures keep their kind ("compile" -> compile_error, "runtime" -> launch_error, anything
//   else -> invalid_config) with the T4 invalidity in the message. The file is read and checked
//   whole before anything is written (a bad file writes nothing): a valid result with a time
//   of 0 (the store keeps positive times only) and a parameter that was an integer beyond
//   int64 (read as a float, it would be stored as the text of one) are refused, naming the
//   result. Everything is written in ONE transaction: an import stopped or failing half-way
//   leaves the database as it was. A result whose study (kernel, problem, device, source
//   "imported") already holds an imported trial of its config is skipped, so importing a file
//   again adds nothing (and no run when nothing is new). Returns how many trials were written
//   and how many were already there.
// - export_t4(): the trials of exactly one study (template, problem, device) -- the latest
//   trial per config -- as a T4 file (results/t4_format.h): Error{InvalidInput} when the
//   database holds none or several (the message lists them; `study` picks one, as
//   "TEMPLATE/PROBLEM/DEVICE"). Never predictions: T4 cannot label a time as predicted, and its
//   readers would take one for a measurement (json and csv export them, labelled). Never over
//   the database.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "results/store.h"
#include "results/t4_format.h"

namespace mgpu::results {

struct T4Import {
  std::string kernel, problem, device, arguments, tool_version;
  // When the kernel is one of our templates: the problem's sizes and types (its key is
  // `problem`) and the template's arch. A landscape's problem records no sizes (all 0).
  std::optional<ProblemRecord> shape;
  std::string arch;
  // Set (by a stop signal) while importing: the transaction is rolled back and import_t4()
  // throws T4ImportStopped -- nothing of the import is kept.
  const std::atomic<bool>* stop = nullptr;
};

struct T4ImportStopped {};

struct T4Imported {
  int written = 0;
  int already_there = 0;  // results skipped: their config was imported into the study before
};

T4Imported import_t4(Store& store, const std::string& path, const T4Import& as);
T4Imported import_t4(Store& store, const T4File& file, const T4Import& as);
// The checks import_t4() makes of the file's results before it writes (Error{InvalidInput}
// naming the result), for callers to make before they open the database.
void check_t4_results(const T4File& file, const std::string& path);
// Error{InvalidInput} unless `as` names a kernel, a problem and a device: what import_t4()
// checks first, for callers to check before they open (and so create) the database.
void check_t4_import(const T4Import& as);
// `note`, when given, is set to say which statuses T4 could hold only as "runtime" failures.
int export_t4(Store& store, const std::string& path, const std::string& study = "", std::string* note = nullptr);

}  // namespace mgpu::results
