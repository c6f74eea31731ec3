#include "harness/current_templates.h"

#include "core/backend_fingerprint.h"
#include <fmt/format.h>

#include "core/error.h"
#include "harness/measure/trial_record.h"
#include "kernels/matmul_template.h"
#include "kernels/op_registry.h"
#include "results/stored_config.h"

namespace mgpu::harness {

namespace {

// results::stored_config()'s template half: a stored config of a template this binary builds
// (same name and source hash) must be one check_config() accepts; other templates (imported
// landscapes, older versions) are not judged here.
void check_stored(const results::TemplateId& id, const results::ProblemRecord&, core::TuningConfig& c) {
  for (const core::ArchSpec& arch : core::all_archs()) {
    const kernels::MatmulTemplate* t = nullptr;
    try {
      t = &kernels::matmul_template(arch);
    } catch (const core::Error&) {
      continue;
    }
    if (t->name() != id.name || t->source_hash() != id.source_hash) continue;
    // Parameters left out read as the template's defaults (as --config takes them): what is
    // refused is a parameter it does not have, or a value of the wrong type or out of range.
    core::TuningConfig full = t->default_config();
    for (const auto& [k, v] : c.values()) full.set(k, v);
    t->check_config(full);
    c = full;
    return;
  }
  for (const kernels::OpEntry& e : kernels::ops())
    for (const core::ArchSpec& arch : core::all_archs()) {
      const kernels::OpTemplate* t = nullptr;
      try {
        t = &e.for_arch(arch);
      } catch (const core::Error&) {
        continue;
      }
      if (t->name() != id.name || t->source_hash() != id.source_hash) continue;
      core::TuningConfig full = t->default_config();
      for (const auto& [k, v] : c.values()) full.set(k, v);
      t->check_config(full);
      c = full;
      return;
    }
}

}  // namespace

void install_stored_config_check() { results::set_template_config_check(check_stored); }

std::vector<results::TemplateId> current_templates() {
  install_stored_config_check();
  std::vector<results::TemplateId> out;
  for (const core::ArchSpec& arch : core::all_archs()) {
    try {
      const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
      out.push_back({std::string(t.name()), std::string(t.source_hash()), core::backend_hash(arch)});
    } catch (const core::Error&) {
      // no template for this arch yet
    }
    for (const kernels::OpEntry& e : kernels::ops()) {
      try {
        const kernels::OpTemplate& t = e.for_arch(arch);
        out.push_back({std::string(t.name()), std::string(t.source_hash()), core::backend_hash(arch)});
      } catch (const core::Error&) {
        // the op has no template for this arch
      }
    }
  }
  return out;
}

results::TemplateId current_template_id(const std::string& op, const core::ArchSpec& arch) {
  if (op != "matmul") return template_id(kernels::op_template(op, arch));
  try {
    return template_id(kernels::matmul_template(arch), arch);
  } catch (const core::Error& e) {
    if (e.kind() != core::ErrorKind::Unavailable) throw;
    throw core::Error(core::ErrorKind::InvalidInput, e.what());
  }
}

}  // namespace mgpu::harness
