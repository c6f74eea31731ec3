// CUPTI activity tracing of kernel executions: the GPU's own start and end timestamps of each
// kernel, so a duration excludes launch overhead and host jitter (nvbench's "GPU time" by
// CUPTI). Contract: KernelTrace::get() opens libcupti at run time (Error{Unavailable} naming
// why); begin() enables kernel activity records for the process; take() flushes CUPTI and
// returns the kernels completed since the previous take(), oldest first; end() disables the
// records. Memsets and copies are not kernels and never appear. CUPTI's activity API is
// process-wide, so there is one KernelTrace per process and one user at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu::core {

struct KernelSpan {
  std::string name;
  std::uint64_t start_ns = 0, end_ns = 0;
  double ms() const { return double(end_ns - start_ns) * 1e-6; }
};

class KernelTrace {
 public:
  static KernelTrace& get();
  void begin();
  std::vector<KernelSpan> take();
  void end();
  struct Api;  // opaque: the CUPTI entry points bound at run time

 private:
  KernelTrace();
  Api* api_;
  bool active_ = false;
};

}  // namespace mgpu::core
