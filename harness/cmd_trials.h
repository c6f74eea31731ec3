// mgpu-tune trials --db FILE [--run RUN] [--status S] [--source cuda|model|replay]
//                  [--template NAME] [--arch ARCH] [--limit N] [--json]
// Lists a database's trials, oldest first, as a results table (id, run, template, problem,
// arch, source, status, median time, TFLOP/s where the trial has a time, config) or JSON.
// --limit N keeps the newest N of the matching trials and says so. Read-only: the database
// is opened with mode=ro and never written. A filter naming something that cannot match
// (unknown status, source or arch, a template or run this database lacks) is bad input
// (exit 2); filters that simply match nothing print an empty table (exit 0).
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_trials_command(CLI::App& app);

}  // namespace mgpu::harness
