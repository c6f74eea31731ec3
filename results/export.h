// Exporting results for production and spreadsheets. Contract: only measured ("cuda"),
// verified, ok results are exported unless include_model (then predictions too, marked by
// their source); only current template versions when `current` is given.
//   json: a folder with one file per (device, template) -- like Tokamax's autotuning cache --
//         keyed by problem, each entry the config with its time and provenance;
//   cpp:  one self-contained header: per arch a constexpr table keyed by shape, a lookup with
//         exact match, nearest-shape fallback and a default config;
//   csv:  one row per trial (every trial, whatever its status) for spreadsheets.
// Each returns the number of entries (json, cpp) or rows (csv) written.
#pragma once

#include <string>
#include <vector>

#include "results/store.h"

namespace mgpu::results {

int export_json(Store& store, const std::string& folder, bool include_model, const std::vector<TemplateId>& current = {});
int export_cpp(Store& store, const std::string& header_path, bool include_model,
               const std::vector<TemplateId>& current = {});
int export_csv(Store& store, const std::string& csv_path);

}  // namespace mgpu::results
