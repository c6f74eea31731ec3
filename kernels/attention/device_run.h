// The attention kernel's launch preparation, on whatever device the CUDA driver is: a GPU, or
// the virtual device (MGPU_CUDA_DRIVER naming libmgpu_vcuda.so) -- one code path for both, as
// the matmul measurers have. PreparedAttention draws Q, K and V from `seed` (normal, Q and K
// at 1.5, V at 1), uploads them, poisons O and LSE with NaN so a missed element fails, encodes
// the three 4-D tensor maps and copies them to device memory, loads the compiled kernel and
// lays out the arguments in the kernel's order (sm90_kernel.h). launch() may run any number of
// times (timing loops); compare() checks the last launch's O and LSE against the float64
// reference within the derived tolerance (the reference is O(b h sq skv d) on one CPU core:
// too slow for the large problems a GPU is timed at, so it is computed only when asked).
// run_attention() builds, compiles and runs once, then times `timed_launches` further launches
// by CUDA events (a warm-up launch not counted). Errors: Error{Compile} from the build,
// Error{InvalidInput} for a config or problem the template refuses, core::CudaError for a
// launch or fault.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/attention/attention_problem.h"
#include "kernels/attention/sm90_kernel.h"
#include "kernels/attention/tolerance.h"

namespace mgpu::kernels::attention {

class PreparedAttention {
 public:
  // `ptx` and `cubin`: the compiled kernel of build_attention_sm90(p, c) (the cubin may be
  // empty: the driver then loads the PTX, as the virtual device does).
  PreparedAttention(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed, const std::string& ptx,
                    const std::string& cubin);
  ~PreparedAttention();
  PreparedAttention(const PreparedAttention&) = delete;
  PreparedAttention& operator=(const PreparedAttention&) = delete;

  void launch();
  // Synchronizes, then compares the last launch's outputs with the reference.
  AttentionComparison compare();
  // Synchronizes; O's bytes, then LSE's.
  std::vector<std::uint8_t> output_bytes();
  // "O[b][h][q][d]" or "LSE[b][h][q]" for a byte of output_bytes().
  std::string describe_byte(std::size_t at) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

struct AttentionRun {
  AttentionComparison comparison;  // ok and empty when not compared
  bool compared = false;
  std::vector<double> times_ms;
  int registers = 0, spill_bytes = 0;
  std::string kernel_hash;    // of the PTX launched (core::kernel_hash)
  std::string device_report;  // the virtual device's findings (JSON), empty on a GPU
};

AttentionRun run_attention(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed, int timed_launches = 0,
                           bool compare = true);

}  // namespace mgpu::kernels::attention
