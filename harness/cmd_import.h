// mgpu-tune import --t4 FILE --db DB [--kernel NAME] [--problem KEY] [--device NAME] [--json]
// Stores another tool's brute-forced results (a T4 file, plain or .gz) as trials with source
// "imported" (results/t4_store.h). T4 records neither kernel nor device: they default to the
// benchmark_hub file name, KERNEL_DEVICE_T4.json[.gz] ("convolution", "A100"), problem "t4".
// A file that is not T4 is bad input (exit 2) and writes nothing. When --kernel names one of
// our templates (matmul_sm90, matmul_sm100), --problem must be a problem key it runs and every
// result's configuration exactly its parameters (else exit 2 naming the result). The import is
// one transaction; results already imported into the study are skipped and counted ("N already
// there"); a stop signal waits for the commit, then exits 128+sig saying so.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_import_command(CLI::App& app);

}  // namespace mgpu::harness
