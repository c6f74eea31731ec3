// The SASS evidence of the kernels a tuning run compiles (issue 19), gathered once per binary
// and kept in the results store. Contract: collect() compiles the config's kernel through the
// compile cache (the loop compiled it ahead: a hit), and unless the store already holds
// evidence for that kernel hash, backend and assembler, disassembles it (nvdisasm) and records
// core::evidence_of() with its lints (Store::record_evidence). It returns the kernel hash, or
// nullopt when nvdisasm is missing (available() false; why_unavailable() names where it was
// looked for) or the kernel does not compile (its trial reports that). It never throws for a
// config; an nvdisasm that fails on one kernel is told once through `notify` and that kernel
// goes without evidence.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/tuning_config.h"
#include "kernels/matmul_template.h"
#include "results/store.h"

namespace mgpu::harness {

class EvidenceCollector {
 public:
  EvidenceCollector(results::Store& store, const kernels::MatmulTemplate& t, std::string backend_hash,
                    std::function<void(const std::string&)> notify = {});
  bool available() const { return why_unavailable_.empty(); }
  const std::string& why_unavailable() const { return why_unavailable_; }

  struct Collected {
    std::string kernel_hash;
    bool reused = false;  // the store held it already
  };
  std::optional<Collected> collect(const kernels::MatmulProblem& p, const core::TuningConfig& c);

 private:
  results::Store& store_;
  const kernels::MatmulTemplate& t_;
  std::string backend_hash_;
  std::function<void(const std::string&)> notify_;
  std::string why_unavailable_;
  bool warned_ = false;
};

}  // namespace mgpu::harness
