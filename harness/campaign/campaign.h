// A tuning campaign: the (op, arch, problem, strategy, budget) tasks a team runs across
// many GPUs, in one JSON file next to its shared working folder. Contract: the folder beside
// CAMPAIGN.json holds NAME-shards/task-I.db (each task's own SQLite shard: no two tasks ever
// write one file), NAME-shards/task-I.status (written by the task when it ends: its exit
// code), NAME-logs/, NAME-slurm/ (the generated sbatch scripts) and NAME.db (the merge of the
// shards). load_campaign() throws Error{InvalidInput} naming the file and what is wrong: not a
// campaign, a field of the wrong type, an integer out of its range (a seed beyond
// 0..kMaxCampaignSeed included), tasks out of order, an op the registry does not know (the
// tasks' tuning options and an op's problem key are checked by the tuning command's own checks:
// cmd_campaign.cc); a task without "op" is a matmul (files written before ops existed);
// save_campaign() replaces the file atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/matmul_problem.h"

namespace mgpu::harness {

// The largest task seed: Optuna's samplers seed numpy, which takes only seeds below 2^32.
inline constexpr std::uint64_t kMaxCampaignSeed = 4294967295;

struct CampaignTask {
  int index = 0;
  std::string arch;  // canonical, e.g. "sm_90a"
  // The op: "matmul" (its own face, `problem`), or one of kernels/op_registry.h's (attention),
  // whose problem is its canonical key (the op's template reads it back).
  std::string op = "matmul";
  kernels::MatmulProblem problem;
  std::string problem_key;
  std::string key() const { return op == "matmul" ? problem.key() : problem_key; }
  std::string strategy = "tpe";
  int trials = 100;
  double time_budget_s = 0;
  std::string device = "auto";
  std::uint64_t seed = 0;
};

struct CampaignSubmission {
  std::string job, merge_job;  // Slurm job ids
  std::vector<int> tasks;      // the array indices submitted
  std::string partition, submitted_at;
};

struct Campaign {
  std::string path;  // CAMPAIGN.json
  std::string name;
  std::vector<CampaignTask> tasks;
  std::vector<CampaignSubmission> submissions;

  std::string dir() const;  // the shared working folder (the campaign file's)
  std::string shard(int index) const;
  std::string status_file(int index) const;
  std::string merged_db() const;
  std::string logs_dir() const;
  std::string scripts_dir() const;
  // The task's recorded exit code, if it ended. Read only from a regular file, never waiting: a
  // FIFO (or a symlink to one) in its place is no exit code, not a reader blocked for good.
  std::optional<int> exit_code(int index) const;
  // Why the task's status file, where there is one, holds no exit code (garbage, a folder, a
  // FIFO or device, unreadable).
  std::optional<std::string> status_file_problem(int index) const;
};

// The name (letters, digits, - and _: it names files and the Slurm job) and the folder (no
// control character); load_campaign() checks them too.
void check_campaign_names(const Campaign& c);
// A Slurm job id as sbatch --parsable gives it: 1 to 20 digits (what goes into sacct/scontrol
// command lines; load_campaign() refuses a submission with anything else).
bool is_job_id(const std::string& text);
Campaign load_campaign(const std::string& path);
void save_campaign(const Campaign& c);
void record_task_exit(const Campaign& c, int index, int exit_code);

}  // namespace mgpu::harness
