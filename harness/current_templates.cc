#include "harness/current_templates.h"

#include "core/backend_fingerprint.h"
#include "core/error.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

std::vector<results::TemplateId> current_templates() {
  std::vector<results::TemplateId> out;
  for (const core::ArchSpec& arch : core::all_archs()) {
    try {
      const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
      out.push_back({std::string(t.name()), std::string(t.source_hash()), core::backend_hash(arch)});
    } catch (const core::Error&) {
      // no template for this arch yet
    }
  }
  return out;
}

}  // namespace mgpu::harness
