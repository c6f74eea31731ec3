// The attention kernel run through the CUDA driver API on whatever device the driver is: a GPU,
// or the virtual device (MGPU_CUDA_DRIVER naming libmgpu_vcuda.so) -- one code path for both,
// as the matmul measurers have. Launch preparation for this template: Q, K and V drawn from
// `seed` (normal, Q and K at 1.5, V at 1), O and LSE poisoned with NaN so a missed element
// fails, the three 4-D tensor maps encoded for the buffers and copied to device memory,
// arguments in the kernel's order (sm90_kernel.h). Contract: returns the comparison with the
// float64 reference (unless `compare` is false: the reference is O(b h sq skv d) on one CPU
// core, too slow for the large problems a GPU is timed at) and, with timed_launches > 0, that
// many further launches' times by CUDA events (ms each, a warm-up launch not counted). Errors: Error{Compile} from the build,
// Error{InvalidInput} for a config or problem the template refuses, core::CudaError for a
// launch or fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention/sm90_kernel.h"
#include "kernels/attention/tolerance.h"

namespace mgpu::kernels::attention {

struct AttentionRun {
  AttentionComparison comparison;  // ok and empty when not compared
  bool compared = false;
  std::vector<double> times_ms;
  int registers = 0, spill_bytes = 0;
  std::string device_report;  // the virtual device's findings (JSON), empty on a GPU
};

AttentionRun run_attention(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed, int timed_launches = 0,
                           bool compare = true);

}  // namespace mgpu::kernels::attention
