#include "harness/bench_repeat.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/error.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"

namespace mgpu::harness {

StoppingRule bench_rule(double min_time_s, double max_time_s) {
  if (max_time_s < min_time_s)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--max-time {} is below --min-time {}: no measurement could gather its least time",
                                  max_time_s, min_time_s));
  // The strict rule, with --min-time as the least kernel time and --max-time as the wall-time
  // cap: nvbench's 0.5 s takes 25,000 flushed launches of a 20 us decode kernel, whose cold
  // launches rarely meet the 0.5% noise bound, so each measurement runs to the cap.
  StoppingRule rule = StoppingRule::strict();
  rule.min_time_s = min_time_s;
  rule.max_time_s = max_time_s;
  return rule;
}

core::GpuInfo bench_gpu(const core::ArchSpec& arch) {
  const core::DeviceReport devices = core::query_devices();
  auto gpu = std::find_if(devices.gpus.begin(), devices.gpus.end(), [&](const core::GpuInfo& g) { return g.arch == &arch; });
  const bool virtual_device = gpu != devices.gpus.end() && core::CudaDriver::get().emulated();  // no clock
  if (gpu == devices.gpus.end() || virtual_device) {  // not a failure of the work, nor bad input: nothing could be measured
    fmt::print(stderr, "mgpu-tune: error: bench needs a {} GPU: {}: nothing was measured\n", arch.name,
               virtual_device ? "the CUDA driver loaded is the virtual device (MGPU_CUDA_DRIVER), which has no clock"
                              : devices.unavailable.value_or("none of this arch"));
    throw ExitWith{kExitNothingMeasured};
  }
  return *gpu;
}

RepeatedTimes measure_repeatedly(int repeat, Timer timer, const std::function<Measurement(Timer, bool)>& measure) {
  auto ok = [&](Timer with, bool verify) {
    Measurement m = measure(with, verify);
    if (m.status != TrialStatus::Ok)
      throw core::Error(core::ErrorKind::WrongResult, fmt::format("{}: {}", to_string(m.status), m.message));
    return m;
  };
  RepeatedTimes r;
  for (int i = 0; i < repeat; ++i) {
    const Measurement m = ok(timer, i == 0);
    r.medians.push_back(m.median_ms);
    r.max_noise = std::max(r.max_noise, m.noise);
  }
  // With CUPTI, the same config once more between CUDA events: the difference is what the
  // events add (launch overhead, host-side gaps).
  if (timer == Timer::Cupti) r.events_ms = ok(Timer::Events, false).median_ms;
  std::vector<double> sorted = r.medians;
  std::sort(sorted.begin(), sorted.end());
  r.median = sorted[sorted.size() / 2];
  r.spread = (sorted.back() - sorted.front()) / r.median;
  return r;
}

}  // namespace mgpu::harness
