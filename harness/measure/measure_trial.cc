#include "harness/measure/measure_trial.h"

#include <fmt/format.h>

#include "core/cache_usability.h"
#include "core/compiler.h"
#include "core/error.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/emulator_verifier.h"
#include "harness/measure/op_measurer.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

Measurement measure_trial(const TrialRequest& req) {
  const core::ArchSpec& arch = core::parse_arch(req.arch);
  if (req.measurer != "model" && req.measurer != "cuda" && req.measurer != "emulate")
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("unknown measurer '{}': model, cuda or emulate", req.measurer));
  if (req.op != "matmul") return measure_op_trial(req);
  Measurement m;
  m.source = req.measurer;
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  try {
    t.check_problem(req.problem);
    t.check_config(req.config);
    if (auto r = t.why_invalid(req.problem, req.config)) {
      m.status = TrialStatus::InvalidConfig;
      m.message = fmt::format("{}: {}", r->rule, r->reason);
      return m;
    }
  } catch (const core::Error& e) {
    m.status = TrialStatus::InvalidConfig;
    m.message = e.what();
    return m;
  }
  core::BuiltKernel k;
  std::string cubin, ptx;
  if (req.measurer != "model" || req.compile) {
    try {
      k = t.build(req.problem, req.config);
      core::CompileOptions o = core::CompileOptions::from_environment();
      o.cache_dir = core::CompileCache::default_dir().string();  // the tuner compiled ahead: a hit
      if (core::why_cache_unusable(o.cache_dir)) o.cache_dir.clear();  // the process that started us warned
      core::CompileResult r = core::compile_module(k.mlir, arch, o);
      cubin = r.units.at(0).cubin.image;
      ptx = r.units.at(0).ptx;
      m.kernel_hash = core::kernel_hash(ptx);
    } catch (const core::Error& e) {
      // A missing tool or an unwritable file says nothing about the config.
      bool machine = e.kind() == core::ErrorKind::IO || e.kind() == core::ErrorKind::Unavailable;
      m.status = machine ? TrialStatus::EnvError : TrialStatus::CompileError;
      m.message = e.what();
      return m;
    }
  }
  if (req.measurer == "model") {
    kernels::Prediction pred = t.predict(req.problem, req.config, arch.default_device(), req.defects);
    double ms = pred.ms;
    // What the kernel's lints cost in the prediction (issue 19), said with the result.
    if (req.defects.known) {
      std::string penalties;
      for (const kernels::LintPenalty& l : pred.lint_penalties)
        penalties += fmt::format("{}{} +{:.2f}%", penalties.empty() ? "" : ", ", l.code, 100 * l.ms / (ms - pred.lint_ms));
      m.message = penalties.empty() ? "lints: none" : "lint penalties: " + penalties;
    }
    m.samples_ms = {ms};
    m.median_ms = m.min_ms = m.mean_ms = ms;
    m.noise_converged = true;
    return m;
  }
  Measurement done = req.measurer == "emulate" ? verify_on_emulator(req, t, k, ptx) : measure_on_gpu(req, t, k, cubin);
  done.kernel_hash = m.kernel_hash;
  return done;
}

}  // namespace mgpu::harness
