// mgpu-tune campaign: tuning campaigns across many GPUs through Slurm.
//   plan     write CAMPAIGN.json: one task per (arch, shape), from --shapes or one problem
//   submit   write the sbatch scripts and submit the job array + a dependent merge job
//            (--dry-run prints them and submits nothing)
//   status   per task: done, failed, timed out, stopped, running, pending, not submitted, lost
//   resume   resubmit only the tasks that are neither done nor queued or running
//   run-task (what an array task runs) tune one task into its shard; record its exit code
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_campaign_command(CLI::App& app);

}  // namespace mgpu::harness
