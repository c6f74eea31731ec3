#include "harness/measure/cuda_measurer.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "core/cublaslt.h"
#include "core/cupti.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/cuda_kernel.h"
#include "core/device_query.h"
#include "core/half.h"
#include "core/nvml.h"
#include "core/prepared_launch.h"
#include "harness/measure/stopping_rule.h"

namespace mgpu::harness {

using kernels::DType;

namespace {

// RAII CUDA event pair for one timed launch.
struct Events {
  CUevent start{}, stop{};
  Events() {
    const auto& d = core::CudaDriver::get();
    d.check(d.api().cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    d.check(d.api().cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~Events() {
    const auto& d = core::CudaDriver::get();
    d.api().cuEventDestroy(start);
    d.api().cuEventDestroy(stop);
  }
};

core::ClockState clocks() {
  try {
    return core::Nvml::get().clock_state(0);
  } catch (const core::Error&) {
    return {};
  }
}

}  // namespace

std::string_view to_string(Timer t) { return t == Timer::Cupti ? "cupti" : "events"; }

void check_timer_choice(std::string_view choice) {
  if (choice != "auto" && choice != "cupti" && choice != "events")
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("unknown timer '{}': choose auto, cupti or events", choice));
}

Timer choose_timer(std::string_view choice) {
  check_timer_choice(choice);
  if (choice == "events") return Timer::Events;
  // CUPTI can load yet refuse to trace (no driver, a profiler attached): try it, once per process.
  static const std::optional<core::Error> refused = []() -> std::optional<core::Error> {
    try {
      core::KernelTrace& trace = core::KernelTrace::get();
      trace.begin();
      trace.end();
      return std::nullopt;
    } catch (const core::Error& e) {
      return e;
    }
  }();
  if (!refused) return Timer::Cupti;
  if (choice == "cupti") throw *refused;  // asked for by name: say why it cannot be had
  return Timer::Events;
}

SampleCollector time_launches(const std::function<void()>& launch, const StoppingRule& rule, core::DeviceBuffer& flush,
                              Timer timer) {
  const auto& drv = core::CudaDriver::get();
  core::CudaContext& ctx = core::CudaContext::primary();
  for (int i = 0; i < 2; ++i) launch();  // warm-up: instruction cache, TLBs, clocks
  ctx.synchronize();
  SampleCollector samples(rule);
  Events ev;
  core::KernelTrace* trace = timer == Timer::Cupti ? &core::KernelTrace::get() : nullptr;
  if (trace) trace->begin();
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    flush.fill_bytes(0);  // evict the operands from L2: every sample starts cold (a memset: not traced)
    if (trace) {
      launch();
      ctx.synchronize();
      std::vector<core::KernelSpan> spans = trace->take();
      if (spans.empty()) {
        trace->end();
        throw core::Error(core::ErrorKind::Launch, "CUPTI recorded no kernel for the launch");
      }
      double ms = 0;
      for (const core::KernelSpan& s : spans) ms += s.ms();
      samples.add(ms);
    } else {
      drv.check(drv.api().cuEventRecord(ev.start, nullptr), "cuEventRecord");
      launch();
      drv.check(drv.api().cuEventRecord(ev.stop, nullptr), "cuEventRecord");
      drv.check(drv.api().cuEventSynchronize(ev.stop), "cuEventSynchronize (kernel execution)");
      float ms = 0;
      drv.check(drv.api().cuEventElapsedTime(&ms, ev.start, ev.stop), "cuEventElapsedTime");
      samples.add(ms);
    }
    if (samples.done(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())) break;
  }
  if (trace) trace->end();
  return samples;
}

bool judge_verification(Measurement& m, double rel, DType out, std::string_view reference) {
  m.verification_error = rel;
  if (rel <= kernels::verification_threshold(out)) return true;
  m.status = TrialStatus::WrongResult;
  m.message = fmt::format("relative Frobenius error {:.3g} exceeds {:.1g} for {} output (vs {})", rel,
                          kernels::verification_threshold(out), to_string(out), reference);
  return false;
}

void time_kernel(Measurement& m, const std::function<void()>& launch, const StoppingRule& rule, core::DeviceBuffer& flush,
                 std::string_view timer_choice) {
  core::ClockState before = clocks();
  const Timer timer = choose_timer(timer_choice);
  SampleCollector samples = time_launches(launch, rule, flush, timer);
  m.timer = std::string(to_string(timer));
  core::ClockState after = clocks();
  SampleStats s = summarize(samples.samples());
  m.samples_ms = samples.samples();
  m.median_ms = s.median;
  m.min_ms = s.min;
  m.mean_ms = s.mean;
  m.noise = s.noise;
  m.noise_converged = samples.converged();
  m.sm_clock_mhz_before = before.sm_mhz;
  m.sm_clock_mhz_after = after.sm_mhz;
  m.throttled = before.throttled || after.throttled;
}

Measurement measure_on_gpu(const TrialRequest& req, const kernels::MatmulTemplate& t, const core::BuiltKernel& kernel,
                           const std::string& cubin) {
  Measurement m;
  m.source = "cuda";
  const kernels::MatmulProblem& p = req.problem;
  try {
    core::CudaContext& ctx = core::CudaContext::primary();
    const core::GpuInfo gpu = core::query_devices().gpus.at(0);
    kernels::PreparedMatmul run(t, p, req.config, /*seed=*/1, "", cubin, gpu.sm_count, &kernel);
    core::DeviceBuffer flush(2 * gpu.l2_bytes);
    if (req.verify) {
      run.launch();
      ctx.synchronize();
      core::DeviceBuffer ref(p.m * p.n * 4);
      core::CublasLt::get().matmul_reference(run.a(), run.b(), ref.ptr(), p.m, p.n, p.k, p.b_layout == kernels::BLayout::NK,
                                             p.in_dtype == DType::BF16);
      const std::vector<std::uint8_t> got = run.output_bytes();
      std::vector<float> want(p.m * p.n);
      ref.download(std::as_writable_bytes(std::span(want)));
      if (!judge_verification(m, kernels::relative_error(got, p.out_dtype, want), p.out_dtype, "cuBLASLt")) return m;
    }
    time_kernel(m, [&] { run.launch(); }, req.rule, flush, req.timer);
    return m;
  } catch (const core::CudaError& e) {
    m.status = e.is_fault() ? TrialStatus::Fault : TrialStatus::LaunchError;
    m.message = e.what();
    return m;
  } catch (const core::Error& e) {
    m.status = TrialStatus::LaunchError;
    m.message = e.what();
    return m;
  }
}

}  // namespace mgpu::harness
