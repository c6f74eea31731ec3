#include "harness/tune/evidence_collector.h"

#include <fmt/format.h>

#include "core/cache_usability.h"
#include "core/compiler.h"
#include "core/error.h"
#include "core/sass/kernel_evidence.h"
#include "core/sass/nvdisasm.h"

namespace mgpu::harness {

EvidenceCollector::EvidenceCollector(results::Store& store, const kernels::MatmulTemplate& t, std::string backend_hash,
                                     std::function<void(const std::string&)> notify)
    : store_(store), t_(t), backend_hash_(std::move(backend_hash)), notify_(std::move(notify)) {
  // The lints are extra: without nvdisasm (or with MGPU_NVDISASM naming no tool) the run goes on
  // and says why they are missing.
  if (!core::find_nvdisasm()) why_unavailable_ = core::why_no_nvdisasm();
}

std::optional<EvidenceCollector::Collected> EvidenceCollector::collect(const kernels::MatmulProblem& p,
                                                                       const core::TuningConfig& c) {
  if (!available()) return std::nullopt;
  core::BuiltKernel k;
  core::CompileResult r;
  try {
    k = t_.build(p, c);
    // The options measure_trial() compiles with, so this is the binary the trial predicts.
    core::CompileOptions o = core::CompileOptions::from_environment();
    o.cache_dir = core::CompileCache::default_dir().string();
    if (core::why_cache_unusable(o.cache_dir)) o.cache_dir.clear();
    r = core::compile_module(k.mlir, t_.arch(), o);
  } catch (const core::Error&) {
    return std::nullopt;  // the trial compiles it too, and reports why it failed
  }
  const core::CompiledUnit& unit = r.units.at(0);
  Collected out{core::kernel_hash(unit.ptx), false};
  const std::string assembler(core::to_string(r.assembler));
  if (store_.evidence(out.kernel_hash, backend_hash_, assembler)) {
    out.reused = true;
    return out;
  }
  core::KernelEvidence e;
  try {
    e = core::evidence_of(unit, k.kernel_name);
  } catch (const core::Error& x) {
    if (!warned_ && notify_) notify_(fmt::format("no SASS evidence for some kernels: {}", x.what()));
    warned_ = true;
    return std::nullopt;
  }
  store_.record_evidence(
      {out.kernel_hash, backend_hash_, assembler, core::evidence_json(e), core::lints_json(core::lints(e)), ""});
  return out;
}

}  // namespace mgpu::harness
