// `mgpu-tune compile --mlir FILE --arch ARCH [--emit ptx|cubin] [-o OUT] [--json]`: compile a
// hand-written MLIR module through the MGPU backend and report each kernel's resources and the
// time of each stage. Unparseable input exits 2; a failed lowering or assembly exits 1.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_compile_command(CLI::App& app);

}  // namespace mgpu::harness
