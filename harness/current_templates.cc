#include "harness/current_templates.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/backend_fingerprint.h"

#include "core/error.h"
#include "harness/measure/trial_record.h"
#include "kernels/matmul_template.h"
#include "kernels/op_registry.h"
#include "results/stored_config.h"

namespace mgpu::harness {

namespace {

// The template of this name and source hash this binary builds, as the op face (matmul's own
// face has no OpTemplate yet), or neither.
struct Built {
  const kernels::MatmulTemplate* matmul = nullptr;
  const kernels::OpTemplate* op = nullptr;
};
Built built_template(const results::TemplateId& id) {
  for (const core::ArchSpec& arch : core::all_archs()) {
    try {
      const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
      if (t.name() == id.name && t.source_hash() == id.source_hash) return {&t, nullptr};
    } catch (const core::Error&) {
      // no matmul template for this arch
    }
    for (const kernels::OpEntry& e : kernels::ops()) {
      try {
        const kernels::OpTemplate& t = e.for_arch(arch);
        if (t.name() == id.name && t.source_hash() == id.source_hash) return {nullptr, &t};
      } catch (const core::Error&) {
        // the op has no template for this arch
      }
    }
  }
  return {};
}

// results::stored_config()'s template half: a stored config of a template this binary builds
// (same name and source hash) must be one check_config() accepts and, where the row's problem
// is known, one its rules accept there (an 'ok' row of a config the template rejects -- over
// the shared memory a CTA may have -- was edited); other templates (imported landscapes, older
// versions) are not judged here.
void check_stored(const results::TemplateId& id, const results::ProblemRecord& problem, core::TuningConfig& c) {
  const Built b = built_template(id);
  if (!b.matmul && !b.op) return;
  // Parameters left out read as the template's defaults (as --config takes them): what is
  // refused is a parameter it does not have, or a value of the wrong type or out of range.
  const std::string op = b.matmul ? "matmul" : std::string(b.op->op());
  if (!problem.kernel.empty() && problem.kernel != op)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("its problem is of kernel '{}', and {} is a template of {}", problem.kernel.substr(0, 40),
                                  id.name, op));
  core::TuningConfig full = b.matmul ? b.matmul->default_config() : b.op->default_config();
  for (const auto& [k, v] : c.values()) full.set(k, v);
  if (b.matmul) {
    b.matmul->check_config(full);
    if (problem.m > 0) b.matmul->require_valid(matmul_problem(problem), full);
  } else {
    b.op->check_config(full);
    if (!problem.key.empty())
      b.op->require_valid(b.op->problem_from_key(problem.key), full);
  }
  c = full;
}

// results::check_problem_row()'s hook: a problem row of an op in the registry must be what
// the op's template makes of its key.
std::optional<std::string> check_problem(const results::ProblemRecord& p) {
  // A matmul row is judged by the store against its own columns (results/store.cc: sizes, types
  // and layout, which older rows have without fields or flops; an imported landscape's are 0).
  if (p.kernel == "matmul") return std::nullopt;
  for (const kernels::OpEntry& e : kernels::ops()) {
    if (e.op != p.kernel) continue;
    const kernels::OpTemplate& t = e.for_arch(core::parse_arch(e.default_arch));  // any arch reads the keys
    kernels::Problem parsed;
    try {
      parsed = t.problem_from_key(p.key);
    } catch (const core::Error& err) {
      if (err.kind() != core::ErrorKind::InvalidInput) throw;
      return fmt::format("its key '{}' is no {} problem: {}", p.key.substr(0, 80), e.op, err.what());
    }
    const results::ProblemRecord want = problem_record(parsed);
    if (want.key != p.key) return fmt::format("its key '{}' is written {}", p.key.substr(0, 80), want.key);
    const nlohmann::json have_fields = nlohmann::json::parse(p.fields, nullptr, /*allow_exceptions=*/false);
    // (A discarded value -- text that is no JSON -- compares unequal to nothing: said first.)
    if (have_fields.is_discarded() || !have_fields.is_object())
      return fmt::format("its fields {} are not a JSON object", p.fields.substr(0, 200));
    if (have_fields != nlohmann::json::parse(want.fields))
      return fmt::format("its fields {} are not its key's {}", p.fields.substr(0, 200), want.fields);
    if (p.dtype != want.dtype || p.out_dtype != want.out_dtype)
      return fmt::format("its types '{}' and '{}' are not its key's {} and {}", p.dtype.substr(0, 20),
                         p.out_dtype.substr(0, 20), want.dtype, want.out_dtype);
    const double wf = want.flops.value_or(0);
    if (!p.flops || std::fabs(*p.flops - wf) > 1e-9 * wf)
      return fmt::format("its flops {} are not its key's {}", p.flops ? fmt::format("{}", *p.flops) : "NULL", wf);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void install_stored_config_check() {
  results::set_template_config_check(check_stored);
  results::set_problem_row_check(check_problem);
}

std::vector<results::TemplateId> current_templates() {
  install_stored_config_check();
  std::vector<results::TemplateId> out;
  for (const core::ArchSpec& arch : core::all_archs()) {
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
  return template_id(kernels::op_template(op, arch));  // Error{InvalidInput} naming the targets there are
}

}  // namespace mgpu::harness
