// The commands over a results database:
//   best    --db FILE [--json] [--include-model] [--all-versions] [--runs [--json]]
//   export  --db FILE --format json|cpp|csv -o PATH [--include-model] [--all-versions]
//   merge   A.db B.db ... -o OUT.db
//   regress --db FILE --baseline RUN --candidate RUN [--threshold PCT] [--max-noise PCT] [--json]
//           [--fail-on-unstable]  (exit 4: no verdict -- too noisy, or no config in common)
// A database that is missing, not SQLite or from a newer mgpu-tune is bad input (exit 2) and
// is left untouched; regress exits 1 when anything got slower.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_results_commands(CLI::App& app);

}  // namespace mgpu::harness
