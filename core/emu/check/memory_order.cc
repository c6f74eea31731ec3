#include "core/emu/check/memory_order.h"

namespace mgpu::emu {

namespace {

bool has(const ptx::Instruction& p, const char* q) {
  for (const auto& s : p.parts)
    if (s == q) return true;
  return false;
}

}  // namespace

const char* scope_name(Scope s) {
  switch (s) {
    case Scope::Cta: return ".cta";
    case Scope::Cluster: return ".cluster";
    case Scope::Gpu: return ".gpu";
    case Scope::Sys: return ".sys";
  }
  return "?";
}

std::string parse_order(const ptx::Instruction& p, bool atomic, MemOrder& out) {
  out = MemOrder{};
  int scopes = 0;
  if (has(p, "cta")) out.scope = Scope::Cta, ++scopes;
  if (has(p, "cluster")) out.scope = Scope::Cluster, ++scopes;
  if (has(p, "gpu")) out.scope = Scope::Gpu, ++scopes;
  if (has(p, "sys")) out.scope = Scope::Sys, ++scopes;
  if (scopes > 1) return "more than one scope";
  const bool relaxed = has(p, "relaxed"), acquire = has(p, "acquire"), release = has(p, "release"), acq_rel = has(p, "acq_rel");
  const bool is_st = p.parts[0] == "st";
  if (atomic) {
    // atom{.sem}{.scope}, red{.sem}{.scope}: every atomic is strong (8.4: a memory operation with
    // .relaxed, the default, is strong); .gpu by default.
    if (relaxed + acquire + release + acq_rel > 1) return "more than one .sem";
    if (p.parts[0] == "red" && (acquire || acq_rel)) return "red takes .relaxed or .release only";
    out.strong = true;
    out.acquire = acquire || acq_rel;
    out.release = release || acq_rel;
    if (!scopes) out.scope = Scope::Gpu;
    return "";
  }
  if (acq_rel) return "ld/st take no .acq_rel";
  if (has(p, "volatile") || has(p, "mmio")) {
    // 8.4.2: "equivalent to a relaxed memory operation with system-scope"; 8.4.1: .mmio is
    // written .mmio.relaxed.sys and has the semantics of a strong operation.
    if (acquire || release) return ".volatile with .acquire/.release";
    out.strong = true;
    out.scope = Scope::Sys;
    return "";
  }
  if (relaxed + acquire + release > 1) return "more than one .sem";
  if (!relaxed && !acquire && !release) {
    if (scopes) return "a scope without .relaxed, .acquire or .release";
    return "";  // weak (.weak, or nothing; .nc reads outside the model)
  }
  if (!scopes) return "a .sem without a scope (.cta, .cluster, .gpu or .sys)";
  if (acquire && is_st) return "st takes no .acquire";
  if (release && !is_st) return "ld takes no .release";
  out.strong = true;
  out.acquire = acquire;
  out.release = release;
  return "";
}

}  // namespace mgpu::emu
