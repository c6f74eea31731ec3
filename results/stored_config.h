// The one rule for a config read back from a database (round 3, battery C_cfg_*): a stored
// config is a JSON object of integers and strings (core::TuningConfig::from_json) and, for a
// template this binary builds (same name and source hash), one its template accepts
// (check_config: no unknown parameter, each value of its type and range; parameters left out
// read as the template's defaults, and stored_config() returns them filled in). A row breaking
// it was written behind the
// tool's back: stored_config() throws Error{InvalidInput} (exit 2) "DB is damaged: trial N has an
// unreadable config (TEXT)" or "... has a config its template TMPL does not accept (TEXT): WHY".
// Store::best() (best, export, report, mgpu-bench), export and a resumed study apply it.
// The template half lives in the harness (results does not know the kernels): it installs it
// with set_template_config_check(); without one only the first half applies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/tuning_config.h"
#include "results/store.h"

namespace mgpu::results {

// Throws Error{InvalidInput} with the reason when `c` is not a config of `tmpl` (`problem` is
// the row's, for a rule that needs it), else fills in the parameters `c` leaves out with the
// template's defaults (what a stored config means: a search strategy is told whole configs);
// leaves `c` as it is for a template it does not know.
using TemplateConfigCheck =
    std::function<void(const TemplateId& tmpl, const ProblemRecord& problem, core::TuningConfig& c)>;
void set_template_config_check(TemplateConfigCheck check);

core::TuningConfig stored_config(const std::string& db, std::int64_t trial_id, const TemplateId& tmpl,
                                 const ProblemRecord* problem, const std::string& config_json);
// The first half alone: for rows whose template rules do not apply (a failed trial's config may
// be one its template rejects).
core::TuningConfig stored_config_text(const std::string& db, std::int64_t trial_id, const std::string& config_json);
inline core::TuningConfig stored_config(const std::string& db, const TrialRow& r) {
  return stored_config(db, r.id, r.tmpl, &r.problem, r.config_json);
}

}  // namespace mgpu::results
