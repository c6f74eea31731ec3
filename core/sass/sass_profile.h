// What the machine code of one compiled kernel shows (issue 19), read from nvdisasm's text.
// Contract: profile_sass() counts instructions by class for one function of the listing (the
// one named, else the first; a name the listing lacks gives an empty profile: function "",
// no instructions) and for its main loop: the innermost loop (a backward branch to a label, the span
// from label to branch) that holds a tensor-core MMA, i.e. the k-loop of a matmul. A tile's
// peeled first k-step and the epilogue are outside it. assembler_advisories() lists the
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
};

struct SassProfile {
  std::string function;
  SassCounts whole, main_loop;
  bool has_main_loop = false;
};

SassProfile profile_sass(std::string_view nvdisasm_text, std::string_view function = {});
std::vector<std::string> assembler_advisories(std::string_view log);

}  // namespace mgpu::core
