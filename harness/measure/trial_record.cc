#include "harness/measure/trial_record.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "core/backend_fingerprint.h"
#include "core/error.h"
#include "core/nvml.h"
#include "kernels/matmul_op.h"

namespace mgpu::harness {

results::ProblemRecord problem_record(const kernels::MatmulProblem& p) {
  return {"matmul", p.key(), p.m, p.n, p.k, std::string(to_string(p.in_dtype)), std::string(to_string(p.out_dtype)),
          std::string(to_string(p.b_layout))};
}

results::ProblemRecord problem_record(const kernels::Problem& p) {
  // A matmul is stored in the problems table's own columns (every schema), as its commands store it.
  if (p.op == "matmul") return problem_record(kernels::matmul_problem_of(p));
  results::ProblemRecord r;
  r.kernel = p.op;
  r.key = p.key;
  r.dtype = p.dtype;
  r.out_dtype = p.out_dtype;
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  // Typed where the text is a number or a switch, so JSON readers get 128, not "128".
  for (const auto& [name, value] : p.fields) {
    if (!value.empty() && value.size() < 19 && value.find_first_not_of("0123456789") == std::string::npos)
      fields[name] = std::stoll(value);
    else if (value == "true" || value == "false")
      fields[name] = value == "true";
    else
      fields[name] = value;
  }
  r.fields = fields.dump();
  r.flops = p.flops;
  return r;
}

kernels::MatmulProblem matmul_problem(const results::ProblemRecord& r) {
  kernels::MatmulProblem p;
  p.m = r.m;
  p.n = r.n;
  p.k = r.k;
  p.in_dtype = kernels::parse_dtype(r.dtype);
  p.out_dtype = kernels::parse_dtype(r.out_dtype);
  p.b_layout = kernels::parse_b_layout(r.layout);
  return p;
}

results::TemplateId template_id(const kernels::MatmulTemplate& t, const core::ArchSpec& arch) {
  return {std::string(t.name()), std::string(t.source_hash()), core::backend_hash(arch)};
}

results::TemplateId template_id(const kernels::OpTemplate& t) {
  return {std::string(t.name()), std::string(t.source_hash()), core::backend_hash(t.arch())};
}

results::Environment gpu_environment(const core::GpuInfo& gpu, const core::DeviceReport& report,
                                     const core::ArchSpec& arch) {
  std::string driver;
  try {
    driver = core::Nvml::get().driver_version();
  } catch (const core::Error&) {
    // NVML absent: the driver version stays unknown
  }
  return {gpu.name, std::string(arch.name), fmt::format("{}.{}", gpu.cc_major, gpu.cc_minor), gpu.sm_count, driver,
          fmt::format("{}.{}", report.driver_cuda_version / 1000, (report.driver_cuda_version % 1000) / 10),
          gpu.sm_clock_khz / 1000.0};
}

results::Environment model_environment(const core::ArchSpec& arch) {
  const core::DeviceSpec& d = arch.default_device();
  return {fmt::format("model:{}", d.name), std::string(arch.name), fmt::format("{}.{}", arch.cc_major, arch.cc_minor),
          d.sm_count, "", "", 0};
}

results::TrialRecord trial_record(std::int64_t run, const results::TemplateId& tmpl, const kernels::MatmulProblem& p,
                                  const core::TuningConfig& c, const results::Environment& env, const Measurement& m) {
  return trial_record(run, tmpl, problem_record(p), c, env, m);
}

results::TrialRecord trial_record(std::int64_t run, const results::TemplateId& tmpl, const results::ProblemRecord& p,
                                  const core::TuningConfig& c, const results::Environment& env, const Measurement& m) {
  results::TrialRecord t;
  t.run_id = run;
  t.tmpl = tmpl;
  t.problem = p;
  t.config_json = c.to_json();
  t.env = env;
  t.status = std::string(to_string(m.status));
  t.source = m.source;
  if (m.status == TrialStatus::Ok && m.source != "emulate") {  // the virtual device has no clock
    t.median_ms = m.median_ms;
    t.min_ms = m.min_ms;
    t.mean_ms = m.mean_ms;
    t.noise = m.noise;
  }
  t.samples_ms = m.samples_ms;
  t.verification_error = m.verification_error;
  t.throttled = m.throttled;
  t.timer = m.timer;
  t.message = m.message;
  t.kernel_hash = m.kernel_hash;
  return t;
}

}  // namespace mgpu::harness
