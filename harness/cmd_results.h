// The commands over a results database:
//   best    --db FILE [--json] [--include-model] [--all-versions] [--runs [--json]]
//   export  --db FILE --format json|cpp|csv|t4 -o PATH [--study T/P/D] [--include-model] [--all-versions] [--json]
//   merge   A.db B.db ... -o OUT.db [--json]
//   regress --db FILE --baseline RUN --candidate RUN [--threshold PCT] [--max-noise PCT] [--json]
//           [--fail-on-unstable]  (exit 4: no verdict -- too noisy, or no config in common)
//   trials  (harness/cmd_trials.h)
// A database that is missing, damaged, locked, not SQLite or from a newer mgpu-tune is bad
// input (exit 2) and is left untouched (results/database.h); no output is ever written over
// a database (results/output_file.h); regress exits 1 when anything got slower.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_results_commands(CLI::App& app);

}  // namespace mgpu::harness
