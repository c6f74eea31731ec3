// T4 files in and out of a results database. Contract:
// - import_t4(): every result of the file becomes a trial of one new run (kind "tune", its
//   arguments saying it was an import), source "imported", under the template `kernel`, the
//   problem `problem` and the device `device` as the caller names them (T4 records none of
//   them); valid results are "ok" with the median runtime, min, mean and every run as samples,
//   failures keep their kind ("compile" -> compile_error, "runtime" -> launch_error, anything
//   else -> invalid_config) with the T4 invalidity in the message. The file is read whole
//   before anything is written (a bad file writes nothing); importing it twice adds a second run. Returns the number of trials written.
// - export_t4(): the trials of exactly one study (template, problem, device) -- the latest
//   trial per config -- as a T4 file (results/t4_format.h): Error{InvalidInput} when the
//   database holds none or several (the message lists them; `study` picks one, as
//   "TEMPLATE/PROBLEM/DEVICE"). Predictions only with include_model. Never over the database.
#pragma once

#include <string>

#include "results/store.h"
#include "results/t4_format.h"

namespace mgpu::results {

struct T4Import {
  std::string kernel, problem, device, arguments, tool_version;
};

int import_t4(Store& store, const std::string& path, const T4Import& as);
int import_t4(Store& store, const T4File& file, const T4Import& as);
// Error{InvalidInput} unless `as` names a kernel, a problem and a device: what import_t4()
// checks first, for callers to check before they open (and so create) the database.
void check_t4_import(const T4Import& as);
int export_t4(Store& store, const std::string& path, bool include_model, const std::string& study = "");

}  // namespace mgpu::results
