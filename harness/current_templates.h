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
// (current_templates() does it as well).
void install_stored_config_check();

}  // namespace mgpu::harness
