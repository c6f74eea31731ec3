#include "harness/measure/op_measurer.h"

#include <cstdlib>

#include <fmt/format.h>

#include "core/cache_usability.h"
#include "core/compile_cache.h"
#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/device_query.h"
#include "core/error.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/emulator_verifier.h"
#include "kernels/op_registry.h"

namespace mgpu::harness {

namespace {

// Every config of a problem sees the same inputs.
constexpr std::uint64_t kInputSeed = 1;

struct Compiled {
  std::string ptx, cubin;
};

Compiled compile(const kernels::OpTemplate& t, const kernels::Problem& p, const core::TuningConfig& c) {
  core::CompileOptions o = core::CompileOptions::from_environment();
  o.cache_dir = core::CompileCache::default_dir().string();
  if (core::why_cache_unusable(o.cache_dir)) o.cache_dir.clear();  // the process that started us warned
  core::CompileResult r = core::compile_module(t.build_mlir(p, c), t.arch(), o);
  return {r.units.at(0).ptx, r.units.at(0).cubin.image};
}

// One schedule on the virtual device; `bytes` gets the outputs.
Measurement emulate_once(const kernels::OpTemplate& t, const kernels::Problem& p, const core::TuningConfig& c,
                         int sm_count, const std::string& ptx, std::uint64_t schedule, std::vector<std::uint8_t>& bytes,
                         std::unique_ptr<kernels::PreparedRun>& run) {
  Measurement m;
  m.source = "emulate";
  try {
    setenv("MGPU_EMU_SEED", std::to_string(schedule).c_str(), 1);  // read by the virtual device at each launch
    run = t.prepare(p, c, kInputSeed, ptx, "", sm_count);
    run->launch();
    bytes = run->output_bytes();  // synchronizes
    const LaunchFindings found = last_launch_findings();
    const kernels::Comparison cmp = run->compare();
    m.verification_error = cmp.error_ratio;
    if (!found.hazards.empty()) {
      found.fail(m);
    } else if (!cmp.ok) {
      m.status = TrialStatus::WrongResult;
      m.message = fmt::format("outside the tolerance of the float64 reference (error / tolerance {:.3g}): {}",
                              cmp.error_ratio, cmp.description);
    } else {
      found.describe_pass(m);
    }
  } catch (const core::CudaError& e) {
    explain_launch_failure(m, e);
  }
  return m;
}

Measurement emulate(const TrialRequest& req, const kernels::OpTemplate& t, const kernels::Problem& p,
                    const std::string& ptx) {
  if (!core::CudaDriver::get().emulated())
    throw core::Error(core::ErrorKind::Unavailable, "the CUDA driver loaded is not the virtual device");
  core::CudaContext::primary();
  std::unique_ptr<kernels::PreparedRun> run;
  return run_schedules(
      req.seeds, [&](std::uint64_t seed, std::vector<std::uint8_t>& got) { return emulate_once(t, p, req.config, req.sm_count, ptx, seed, got, run); },
      [&](std::size_t at, const std::vector<std::uint8_t>&, const std::vector<std::uint8_t>&) {
        return fmt::format("{} differs between schedule 1 (seed {}) and this one", run->describe_byte(at), schedule_seed(0));
      });
}

Measurement on_gpu(const TrialRequest& req, const kernels::OpTemplate& t, const kernels::Problem& p, const Compiled& k) {
  Measurement m;
  m.source = "cuda";
  try {
    core::CudaContext::primary();
    const core::GpuInfo gpu = core::query_devices().gpus.at(0);
    if (req.verify) {
      int checked = 0;
      double worst = 0;
      // Each class's problem (one too large for the virtual device runs here all the same).
      for (const kernels::VerificationProblem& v : t.verification_problems(p, req.config, gpu.sm_count)) {
        const Compiled vk = compile(t, v.problem, req.config);
        std::unique_ptr<kernels::PreparedRun> run =
            t.prepare(v.problem, req.config, kInputSeed, vk.ptx, vk.cubin, v.sm_count);
        run->launch();
        const kernels::Comparison cmp = run->compare();
        worst = std::max(worst, cmp.error_ratio);
        m.verification_error = worst;
        if (!cmp.ok) {
          m.status = TrialStatus::WrongResult;
          m.message = fmt::format("on the GPU at {} ({}), outside the tolerance of the float64 reference: {}",
                                  v.problem_class, v.problem.key, cmp.description);
          return m;
        }
        ++checked;
      }
      m.message = fmt::format("checked on the GPU at {} problem classes against the float64 reference", checked);
    }
    std::unique_ptr<kernels::PreparedRun> run = t.prepare(p, req.config, kInputSeed, k.ptx, k.cubin, 0);
    core::DeviceBuffer flush(2 * gpu.l2_bytes);
    time_kernel(m, [&] { run->launch(); }, req.rule, flush, req.timer);
    return m;
  } catch (const core::CudaError& e) {
    m.status = e.is_fault() ? TrialStatus::Fault : TrialStatus::LaunchError;
    m.message = e.what();
    return m;
  } catch (const core::Error& e) {
    m.status = e.kind() == core::ErrorKind::Compile ? TrialStatus::CompileError : TrialStatus::LaunchError;
    m.message = e.what();
    return m;
  }
}

}  // namespace

Measurement measure_op_trial(const TrialRequest& req) {
  return measure_op_trial(req, kernels::op_template(req.op, core::parse_arch(req.arch)));
}

Measurement measure_op_trial(const TrialRequest& req, const kernels::OpTemplate& t) {
  const core::ArchSpec& arch = t.arch();
  Measurement m;
  m.source = req.measurer;
  kernels::Problem p;
  try {
    p = t.problem_from_key(req.problem_key);
    t.check_config(req.config);
    if (auto r = t.why_invalid(p, req.config)) {
      m.status = TrialStatus::InvalidConfig;
      m.message = fmt::format("{}: {}", r->rule, r->reason);
      return m;
    }
  } catch (const core::Error& e) {
    m.status = TrialStatus::InvalidConfig;
    m.message = e.what();
    return m;
  }
  Compiled k;
  if (req.measurer != "model" || req.compile) {
    try {
      k = compile(t, p, req.config);
      m.kernel_hash = core::kernel_hash(k.ptx);
    } catch (const core::Error& e) {
      // A missing tool or an unwritable file says nothing about the config.
      bool machine = e.kind() == core::ErrorKind::IO || e.kind() == core::ErrorKind::Unavailable;
      m.status = machine ? TrialStatus::EnvError : TrialStatus::CompileError;
      m.message = e.what();
      return m;
    }
  }
  if (req.measurer == "model") {
    const double ms = t.predict_ms(p, req.config, arch.default_device());
    m.samples_ms = {ms};
    m.median_ms = m.min_ms = m.mean_ms = ms;
    m.noise_converged = true;
    return m;
  }
  Measurement done;
  try {
    done = req.measurer == "emulate" ? emulate(req, t, p, k.ptx) : on_gpu(req, t, p, k);
  } catch (const core::Error& e) {
    done.source = req.measurer;
    done.status = e.kind() == core::ErrorKind::Unavailable ? TrialStatus::EnvError : TrialStatus::LaunchError;
    done.message = e.what();
  }
  done.kernel_hash = m.kernel_hash;
  return done;
}

}  // namespace mgpu::harness
