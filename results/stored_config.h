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
#include <optional>
#include <string>

#include "core/tuning_config.h"
#include "results/store.h"

namespace mgpu::results {

// Throws Error{InvalidInput} with the reason when `c` is not a config of `tmpl` (`problem` is
// the row's, for a rule that needs it; its kernel is "" when the row's problem is not known), else fills in the parameters `c` leaves out with the
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

// The problem half, applied by every reader of trials (Store::query_trials): a problem row of
// an op whose template this binary builds (its kernel column names the op) must be the problem
// its key names -- the fields, flops and types the op derives from the key. Without it a row
// whose fields say h4 under a key that says h2 is exported and ranked as either. The hook
// returns why a row is not (nullopt for one it does not judge: a matmul, whose columns
// store.cc checks itself, or an imported landscape's kernel). Installed by the harness.
using ProblemRowCheck = std::function<std::optional<std::string>(const ProblemRecord& problem)>;
void set_problem_row_check(ProblemRowCheck check);
// Throws Error{InvalidInput} "DB is damaged: trial N has a problem row of OP that is not its
// key's problem: WHY". why_problem_row_wrong() is the hook's answer alone (nullopt when none is
// installed), for a check of a row no trial names yet (Store::check_problem).
void check_problem_row(const std::string& db, std::int64_t trial_id, const ProblemRecord& problem);
std::optional<std::string> why_problem_row_wrong(const ProblemRecord& problem);

}  // namespace mgpu::results
