// Compiling many modules at once on a pool of worker threads. Each compile builds its own
// MLIRContext, so workers share nothing but the job list and the (atomic, rename-based) disk
// cache. Contract: compile_all() returns one outcome per job, in job order; a job that fails
// holds its Error and the others go on. threads <= 0 means one per hardware thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/compiler.h"
#include "core/error.h"

namespace mgpu::core {

struct CompileJob {
  std::string mlir_text;
  const ArchSpec* arch = nullptr;
};

struct CompileOutcome {
  std::optional<CompileResult> result;
  std::optional<Error> error;
  bool ok() const { return result.has_value(); }
};

std::vector<CompileOutcome> compile_all(std::span<const CompileJob> jobs, const CompileOptions& options,
                                        int threads = 0);

}  // namespace mgpu::core
