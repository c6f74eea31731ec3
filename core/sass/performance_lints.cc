#include "core/sass/performance_lints.h"

#include <algorithm>

#include <fmt/format.h>

namespace mgpu::core {

namespace {

bool has(const std::vector<std::string>& codes, const char* code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

}  // namespace

// Judged only against the PTX's own count: a kernel's loop may need more than a pipelined
// matmul k-step's two (an attention KV step has four or three), so without its PTX nothing is
// said (round 12: every healthy attention cubin read without --ptx was flagged).
bool main_loop_syncs_added(const KernelEvidence& k) {
  return k.sass.has_main_loop && k.ptx_main_loop_warpgroup_sync &&
         k.sass.main_loop.warpgroup_sync > *k.ptx_main_loop_warpgroup_sync;
}

std::vector<Lint> lints(const KernelEvidence& k) {
  std::vector<Lint> out;
  // The register split the PTX asks for never happens: relocatable assembly drops it (C7504),
  // or ptxas cannot tell the entry budget (C7508); the SASS then has no USETMAXREG.
  if (k.ptx_has_setmaxnreg && (k.sass.whole.setmaxnreg == 0 || has(k.advisories, "C7504") || has(k.advisories, "C7508")))
    out.push_back({"setmaxnreg-dropped",
                   fmt::format("the PTX's setmaxnreg did not survive assembly ({} USETMAXREG in SASS{}{})",
                               k.sass.whole.setmaxnreg, has(k.advisories, "C7504") ? ", C7504" : "",
                               has(k.advisories, "C7508") ? ", C7508" : "")});
  // ptxas injected warpgroup.arrive/wait around MMAs (C7519/C7517), or the k-loop holds more
  // than the fences and waits its PTX asked for (a pipelined matmul k-step: one of each; an
  // attention KV step: two of each, as its softmax needs S before P.V issues).
  const bool injected = has(k.advisories, "C7519") || has(k.advisories, "C7517");
  if (injected || main_loop_syncs_added(k))
    out.push_back({"serialised-mma",
                   fmt::format("wgmmas wait for each other: {} warpgroup arrive/wait in the main loop {}{}",
                               k.sass.main_loop.warpgroup_sync,
                               k.ptx_main_loop_warpgroup_sync
                                   ? fmt::format("where its PTX has {}", *k.ptx_main_loop_warpgroup_sync)
                                   : std::string("(its PTX was not read)"),
                               injected ? ", and the assembler says it injected some" : "")});
  if (k.spill_store_bytes > 0)
    out.push_back({"spills", fmt::format("{} bytes of registers spilled to local memory", k.spill_store_bytes)});
  if (k.sass.has_main_loop && k.sass.main_loop.local_memory > 0)
    out.push_back({"local-memory-in-main-loop",
                   fmt::format("{} local-memory loads/stores in the main loop", k.sass.main_loop.local_memory)});
  // A GPU-wide memory barrier in the k-loop makes every k-step wait for all of the warp's
  // outstanding accesses: on the H100 a .release.cluster remote arrive did that to 2-CTA
  // clusters, 0.6x the unclustered kernel (README, "The third run on a GPU").
  if (k.sass.has_main_loop && k.sass.main_loop.wide_membar > 0)
    out.push_back({"membar-in-main-loop",
                   fmt::format("{} GPU-wide memory barrier{} (MEMBAR) in the main loop: a release at cluster or GPU "
                               "scope there waits every k-step for all of the thread's outstanding accesses",
                               k.sass.main_loop.wide_membar, k.sass.main_loop.wide_membar == 1 ? "" : "s")});
  if (!k.sass.has_main_loop && k.sass.whole.mma > 0)
    out.push_back({"no-main-loop", "no loop holding an MMA was found: the k-loop may be unrolled away or the listing unusual"});
  if (k.bank_conflicts && k.bank_conflicts->conflicts > 0)
    out.push_back({"bank-conflicts", fmt::format("shared-memory bank conflicts on the virtual device: {} ({:.1f}-way)",
                                                 bank_conflict_text(*k.bank_conflicts), k.bank_conflicts->ways())});
  return out;
}

}  // namespace mgpu::core
