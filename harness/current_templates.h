// The template versions this binary builds, as results identify them (name, source hash,
// backend hash): rows of other versions are stale.
#pragma once

#include <vector>

#include "results/store.h"

namespace mgpu::harness {

std::vector<results::TemplateId> current_templates();

}  // namespace mgpu::harness
