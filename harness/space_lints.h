// `mgpu-tune space matmul --lints` (issue 19): the performance lints of a template's space, one
// row per distinct kernel (configs that differ only in run-time parameters share a binary).
// Contract: lint_census() compiles each kernel (through the compile cache, `threads` at once),
// disassembles it with nvdisasm and runs core::lints(); a kernel that fails to compile is
// counted, not fatal. `sample` > 0 takes that many configs (harness/config_sample.h) instead
// of every valid one. Progress goes to `progress` (a line per batch) when given. Bank
// conflicts are not among these lints: they need a run on the virtual device (verify).
// No nvdisasm: Error{InvalidInput} naming where it was looked for, before anything compiles.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/sass/performance_lints.h"
#include "core/tuning_config.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

struct KernelLintRow {
  core::TuningConfig config;  // the first config of the space building this kernel
  bool compiled = false;
  std::string error;          // when not compiled
  std::vector<core::Lint> lints;
};

struct LintCensus {
  std::vector<KernelLintRow> kernels;
  int failed = 0, clean = 0;
  std::map<std::string, int> by_code;  // lint code -> kernels that have it
  double wall_s = 0;
};

LintCensus lint_census(const kernels::MatmulTemplate& t, const kernels::MatmulProblem& p, int threads, int sample,
                       std::uint64_t sample_seed, const std::function<void(const std::string&)>& progress);

}  // namespace mgpu::harness
