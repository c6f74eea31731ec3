// `mgpu-tune sass CUBIN [--kernel NAME] [--ptxas-log FILE] [--ptx FILE] [--json]` (issue 19):
// what the machine code of ANY cubin shows -- ours, Triton's, a hand-assembled one -- with the
// classifier and lints of `compile matmul --sass` (harness/sass_report.h). Registers come from
// the ptxas -v log when given, else from the cubin itself; spill bytes and the assembler's
// advisories only from the log; whether the PTX asked for setmaxnreg only from --ptx.
// A missing or unreadable file, a file that is not a cubin, or a kernel it lacks exits 2.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_sass_command(CLI::App& app);

}  // namespace mgpu::harness
