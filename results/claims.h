// Trials claimed before they are measured, so that concurrent runs on one database share a
// study's budget and never measure a config twice. A study is what a resumed run counts: one
// template version, problem, device name and source. Contract:
//   claim() is one BEGIN IMMEDIATE transaction: it drops the study's claims whose holder is
//   dead (same host: its pid is gone or belongs to a newer process; any host: not renewed for
//   kLeaseSeconds), then answers Taken when the config has a counted trial or a live claim,
//   BudgetReached when counted configs plus live claims reach the budget, else records the
//   claim (holder: host, pid, process start) and answers Claimed.
//   A counted trial is any status but env_error (the machine failed, not the config).
//   release() drops this process's claim once its trial is committed (or abandoned); claims
//   of a process that dies are reclaimed by the next claim() of anyone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>

#include "core/tuning_config.h"
#include "results/store.h"

namespace mgpu::results {

struct StudyKey {
  TemplateId tmpl;
  std::string problem_key;
  std::string device_name;
  std::string source;  // cuda | model | replay
  std::string text() const;  // the claims table's study column
};

enum class ClaimResult { Claimed, Taken, BudgetReached };

// A committed trial of the study (counted statuses only), as the strategy is told it.
struct StudyTrial {
  std::int64_t id = 0;
  std::string config_json;
  std::string status;
  std::optional<double> median_ms, noise;
  std::string problem_kernel;  // the kernel column of its problem row (the study matches the key)
};

// A row of a study, judged as every reader judges it (results/stored_config.h): its problem row
// must be of the study's op (`problem.kernel`), and an ok row's config one `tmpl` accepts at
// `problem` (a failed trial's config may be one it rejects). Returns the config whole, for the
// strategy; throws Error{InvalidInput} "DB is damaged: trial N ..." otherwise. `db` names the
// database in messages.
core::TuningConfig study_trial_config(const std::string& db, const StudyTrial& r, const TemplateId& tmpl,
                                      const ProblemRecord& problem);

class Claims {
 public:
  static constexpr std::int64_t kLeaseSeconds = 900;

  // `path`: the database as the user named it, for messages (default: the file SQLite has open).
  Claims(SQLite::Database& db, StudyKey study, std::string path = "")
      : db_(db), study_(std::move(study)), path_(std::move(path)) {}

  ClaimResult claim(const std::string& config_json, int budget);
  void release(const std::string& config_json);
  // Distinct configs with a counted trial.
  int counted();
  // Counted trials with id > after_id, oldest first.
  std::vector<StudyTrial> trials_after(std::int64_t after_id);

 private:
  void reclaim_dead();
  const std::string& path() const;
  SQLite::Database& db_;
  StudyKey study_;
  mutable std::string path_;
};

}  // namespace mgpu::results
