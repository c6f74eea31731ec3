// The template versions this binary builds, as results identify them (name, source hash,
// backend hash): rows of other versions are stale.
#pragma once

#include <vector>

#include "results/store.h"

namespace mgpu::harness {

std::vector<results::TemplateId> current_templates();

// Makes results::stored_config() judge a stored config of these templates by their rules too
// (current_templates() does it as well).
void install_stored_config_check();

}  // namespace mgpu::harness
