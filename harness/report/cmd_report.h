// mgpu-tune report --db FILE -o DIR [--json]: an HTML page (DIR/index.html, opens from disk) with
// pictures drawn by the embedded Python's matplotlib: tuning convergence, the landscape over
// the two most important parameters, Optuna's parameter importance, and each exported
// config's regression history; predictions drawn apart from measurements. A missing
// matplotlib is a clear error naming the Debian package (exit 2); the database is read only,
// and DIR (or a file the report writes in it) may not be the database. Pictures that leave
// runs or configs out say so in their captions ("showing 10 of 14 ..."); numeric parameter
// axes are in numeric order. --json: an object naming the files written.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_report_command(CLI::App& app);

}  // namespace mgpu::harness
