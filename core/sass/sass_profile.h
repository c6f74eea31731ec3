// What the machine code of one compiled kernel shows (issue 19), read from nvdisasm's text.
// Contract: profile_sass() counts instructions by class for one function of the listing (the
// one named, else the first; a name the listing lacks gives an empty profile: function "",
// no instructions) and for its main loop: the innermost loop (a backward branch to a label, the span
// from label to branch) that holds a tensor-core MMA, i.e. the k-loop of a matmul. A tile's
// peeled first k-step and the epilogue are outside it. The epilogue is what follows the main
// loop up to the first EXIT that no predicate guards (nvdisasm's out-of-line wait retries come
// after it): the accumulator's stores and the output's TMA stores, plus the tile loop's tail.
// A template that overlaps a tile's epilogue with the next tile's first k-step emits the
// epilogue twice, inside the tile loop and once more after it for the last tile; this counts
// the second, so an epilogue's counts mean the same with and without the overlap.
// register_budgets lists the USETMAXREG instructions in order (setmaxnreg as it survived
// assembly: one role releasing registers, the others raising theirs). assembler_advisories() lists the
// "(Cnnnn)" codes of a ptxas/nvJitLink verbose log, each once, in order of first appearance.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mgpu::core {

struct SassCounts {
  int instructions = 0;
  int mma = 0;              // HGMMA (Hopper), UTC*MMA (Blackwell)
  int tma = 0;              // UTMALDG, UTMASTG, UTMAPF, UBLKCP, ...
  int sync = 0;             // SYNCS.* (mbarriers), BAR.* (named barriers)
  int warpgroup_sync = 0;   // WARPGROUP.ARRIVE, WARPGROUP.DEPBAR: wgmma fences and waits
  int local_memory = 0;     // LDL, STL: spills or arrays put in local memory
  int setmaxnreg = 0;       // USETMAXREG: the register split survived assembly
  int shared_store = 0;     // STS, STSM: e.g. the epilogue staging the accumulator for TMA
  int wide_membar = 0;      // MEMBAR.*.GPU / .SYS: waits until the thread's earlier accesses are
                            // visible GPU-wide (what ptxas makes of a .release.cluster/.gpu)
};

struct RegisterBudget {
  bool raise = false;  // USETMAXREG.TRY_ALLOC (raise to) vs .DEALLOC (release down to)
  int registers = 0;
};

struct SassProfile {
  std::string function;
  SassCounts whole, main_loop, epilogue;
  bool has_main_loop = false, has_epilogue = false;
  std::vector<RegisterBudget> register_budgets;
};

SassProfile profile_sass(std::string_view nvdisasm_text, std::string_view function = {});
std::vector<std::string> assembler_advisories(std::string_view log);

}  // namespace mgpu::core
