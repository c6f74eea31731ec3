// What `bench matmul` and `bench <op>` share: the strict stopping rule from --min-time and
// --max-time (Error{InvalidInput} when the cap is below the least time), the GPU of the arch
// (no such GPU, or the virtual device, which has no clock: said on stderr, ExitWith{3}), and the
// repeated strict measurements of one config -- the first verifies, each must be ok
// (Error{WrongResult} otherwise), and with CUPTI one more between CUDA events.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/arch.h"
#include "core/device_query.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/measurement.h"
#include "harness/measure/stopping_rule.h"

namespace mgpu::harness {

StoppingRule bench_rule(double min_time_s, double max_time_s);
core::GpuInfo bench_gpu(const core::ArchSpec& arch);

struct RepeatedTimes {
  std::vector<double> medians;  // one per measurement, in order
  double median = 0, spread = 0, max_noise = 0;  // the median of the medians; (max - min) / median
  std::optional<double> events_ms;  // with CUPTI: the same config between CUDA events
};
// `measure(timer, verify)` takes one strict measurement.
RepeatedTimes measure_repeatedly(int repeat, Timer timer, const std::function<Measurement(Timer, bool)>& measure);

}  // namespace mgpu::harness
