// The template versions this binary builds, as results identify them (name, source hash,
// backend hash): rows of other versions are stale.
#pragma once

#include <string>
#include <vector>

#include "core/arch.h"
#include "results/store.h"

namespace mgpu::harness {

std::vector<results::TemplateId> current_templates();

// The version this binary builds of `op`'s template for `arch` (matmul's own face, or the op
// registry's): Error{InvalidInput} when it builds none.
results::TemplateId current_template_id(const std::string& op, const core::ArchSpec& arch);

// Makes results::stored_config() judge a stored config of these templates by their rules too
// (at the row's problem, where it is known), and every reader of trials judge an op's problem
// row by its key (results::check_problem_row()). main() installs both; current_templates()
// does as well.
void install_stored_config_check();

}  // namespace mgpu::harness
