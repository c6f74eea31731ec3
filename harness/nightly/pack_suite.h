// mgpu-bench --pack: a kernel pack (export --format pack) measured as shipped -- its own library
// through its C ABI, never rebuilt from this binary's templates -- so the nightly gates what
// production runs. Contract: KernelPack::open(path) takes a pack folder (its manifest.json says it
// is one; built here with CMake as a shared library in a temporary folder, removed with the
// KernelPack) or a built pack library (libmgpu_pack.so), and loads it (dlopen). Error{InvalidInput}
// for a path that is neither, a library without the pack's ABI, or a folder that does not build
// (the build log's last lines are in the message); Error{Unavailable} when cmake cannot be run.
// entries() lists the pack's entries as suite entries named "pack/TEMPLATE/PROBLEM_KEY" (each
// once, in the pack's order). measure() runs entry `index` at its own problem through
// mgpu_matmul_entry() on the calling thread's current context: seeded inputs, C poisoned and
// compared with cuBLASLt, then timed as any kernel (time_kernel(): cold L2, the stopping rule,
// CUPTI or events). It runs in the caller's process: a fault ends the caller's use of CUDA.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/measure/measurement.h"
#include "harness/measure/stopping_rule.h"
#include "harness/nightly/suite.h"

namespace mgpu::harness {

class KernelPack {
 public:
  static KernelPack open(const std::string& path);
  KernelPack(KernelPack&&) noexcept;
  KernelPack& operator=(KernelPack&&) noexcept;
  ~KernelPack();

  // SuiteEntry::pack_index is the entry's index in the pack; `measured` is its source "cuda".
  std::vector<SuiteEntry> entries() const;
  // Each entry's source hash as the pack records it (of the template version that built it).
  std::string source_hash(int index) const;
  Measurement measure(const SuiteEntry& entry, const StoppingRule& rule, const std::string& timer) const;
  const std::string& library() const;  // the library loaded

 private:
  struct Impl;
  explicit KernelPack(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mgpu::harness
