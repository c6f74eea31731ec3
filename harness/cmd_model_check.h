// mgpu-tune model-check --db FILE [--db FILE...] [--json]
// The cost model against the hardware: every measured trial (source cuda, status ok) of the
// databases is predicted again by the current model of its template, for its problem, config
// and device (the recorded GPU name picks the device's rates; an unknown GPU takes its arch's
// default and says so), and the two orders are compared by Spearman's rank correlation per
// problem and device, and within it per schedule (the config's "schedule", with "+pingpong" for
// ping-pong consumers; "all" for templates without one). A config measured several times counts once, at the median of its medians.
// Parameters a stored config lacks read as the template's defaults. Rows of an older version of
// the template count (the model judges the config as today's kernel runs it); rows of another
// template, or whose config the template now rejects, are counted as left out, with the reason.
// Read-only. Exit 0 with a table; 2 for a database that cannot be read.
#pragma once

#include <CLI/App.hpp>

namespace mgpu::harness {

void add_model_check_command(CLI::App& app);

}  // namespace mgpu::harness
