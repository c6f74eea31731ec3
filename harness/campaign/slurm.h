// Slurm for campaigns: the generated sbatch scripts, submitting them, and asking Slurm what
// became of the array tasks. Contract: array_script() is a readable, commented sbatch script
// running `mgpu-tune campaign run-task CAMPAIGN $SLURM_ARRAY_TASK_ID` for the given indices
// (every path in it quoted, for bash and for sbatch's #SBATCH parser alike);
// merge_script() merges every shard into the campaign database (idempotent). submit() runs
// sbatch --parsable and returns the job id (Error{Unavailable} without sbatch, Error{IO} when
// sbatch refuses, with its message). task_states() maps array index -> Slurm state
// (PENDING, RUNNING, COMPLETED, FAILED, ...) from sacct, or from scontrol where accounting is
// disabled; tasks Slurm no longer knows are absent.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/campaign/campaign.h"

namespace mgpu::harness {

struct SubmitOptions {
  std::string partition;
  int gpus_per_task = 1;
  int max_parallel = 0;      // 0: no limit
  std::string time_limit;    // sbatch --time, empty: the partition's default
  std::string mgpu_tune;     // the executable the tasks run (on the shared filesystem)
  double mem_bytes = 0;      // memory each task's node must have (sbatch --mem), 0: the partition's default
};

// --partition, --time, --gpus-per-task and --max-parallel, before they go into #SBATCH
// lines: Error{InvalidInput} naming the value.
void check_submit_options(const SubmitOptions& o);

std::string array_spec(const std::vector<int>& tasks, int max_parallel);  // "0-3,7%2"
std::string array_script(const Campaign& c, const std::vector<int>& tasks, const SubmitOptions& o);
std::string merge_script(const Campaign& c, const SubmitOptions& o);

std::string submit(const std::string& script_path, const std::vector<std::string>& extra_args = {});
std::map<int, std::string> task_states(const std::string& job_id, std::string* source = nullptr);

}  // namespace mgpu::harness
