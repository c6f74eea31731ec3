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

double read_out(const std::vector<std::uint8_t>& c, std::size_t i, DType t) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, c.data() + 4 * i, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, c.data() + 2 * i, 2);
  return t == DType::BF16 ? core::from_bf16(h) : core::from_f16(h);
}

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

std::vector<std::uint16_t> seeded_input(std::size_t n, std::uint64_t seed, DType t) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = t == DType::BF16 ? core::to_bf16(dist(rng)) : core::to_f16(dist(rng));
  return v;
}

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

double verification_threshold(DType out) {
  // bf16 keeps 8 mantissa bits (relative rounding ~2^-9 per element), f16 11, f32 24; the
  // reference is f32-accumulated like the kernel, so the output rounding dominates.
  return out == DType::BF16 ? 1e-2 : out == DType::F16 ? 2e-3 : 1e-4;
}

MatmulInputs matmul_inputs(const kernels::MatmulProblem& p) {
  std::uint64_t seed = std::hash<std::string>{}(p.key());
  return {seeded_input(p.m * p.k, seed, p.in_dtype), seeded_input(p.k * p.n, seed + 1, p.in_dtype)};
}

namespace {

template <typename T>
double relative_error_of(const std::vector<std::uint8_t>& got, DType out, const std::vector<T>& want) {
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double g = read_out(got, i, out);
    err += (g - want[i]) * (g - want[i]);
    norm += double(want[i]) * want[i];
  }
  double rel = std::sqrt(err / std::max(norm, 1e-300));
  return std::isnan(rel) ? INFINITY : rel;
}

}  // namespace

double relative_error(const std::vector<std::uint8_t>& got, DType out, const std::vector<float>& want) {
  return relative_error_of(got, out, want);
}
double relative_error(const std::vector<std::uint8_t>& got, DType out, const std::vector<double>& want) {
  return relative_error_of(got, out, want);
}

bool judge_verification(Measurement& m, double rel, DType out, std::string_view reference) {
  m.verification_error = rel;
  if (rel <= verification_threshold(out)) return true;
  m.status = TrialStatus::WrongResult;
  m.message = fmt::format("relative Frobenius error {:.3g} exceeds {:.1g} for {} output (vs {})", rel,
                          verification_threshold(out), to_string(out), reference);
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
    const int in = kernels::size_in_bytes(p.in_dtype), out = kernels::size_in_bytes(p.out_dtype);
    MatmulInputs x = matmul_inputs(p);
    core::DeviceBuffer da(x.a.size() * in), db(x.b.size() * in), dc(p.m * p.n * out), flush(2 * gpu.l2_bytes);
    da.upload(std::as_bytes(std::span(x.a)));
    db.upload(std::as_bytes(std::span(x.b)));
    std::vector<CUdeviceptr> bases = {da.ptr(), db.ptr(), dc.ptr()};
    std::optional<core::DeviceBuffer> ws = core::zeroed_workspace(t.workspace_bytes(p, req.config, gpu.sm_count));
    core::PreparedLaunch launch(kernel, bases, t.scalar_args(p, req.config), t.grid(p, req.config, gpu.sm_count),
                                core::workspace_ptr(ws));
    core::LoadedModule mod(cubin);
    CUfunction fn = mod.function(kernel.kernel_name);

    if (req.verify) {
      dc.fill_bytes(0xFF);  // NaN poison: an element the kernel misses cannot pass
      launch.launch(fn);
      ctx.synchronize();
      core::DeviceBuffer ref(p.m * p.n * 4);
      core::CublasLt::get().matmul_reference(da.ptr(), db.ptr(), ref.ptr(), p.m, p.n, p.k,
                                             p.b_layout == kernels::BLayout::NK, p.in_dtype == DType::BF16);
      std::vector<std::uint8_t> got(p.m * p.n * out);
      std::vector<float> want(p.m * p.n);
      dc.download(std::as_writable_bytes(std::span(got)));
      ref.download(std::as_writable_bytes(std::span(want)));
      if (!judge_verification(m, relative_error(got, p.out_dtype, want), p.out_dtype, "cuBLASLt")) return m;
    }

    time_kernel(m, [&] { launch.launch(fn); }, req.rule, flush, req.timer);
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
