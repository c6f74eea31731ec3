#include "harness/sass_report.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/sass/nvdisasm.h"

namespace mgpu::harness {

nlohmann::json sass_counts_json(const core::SassCounts& c) {
  return {{"instructions", c.instructions}, {"mma", c.mma},           {"tma", c.tma},
          {"sync", c.sync},                 {"warpgroup_sync", c.warpgroup_sync}, {"local_memory", c.local_memory},
          {"setmaxnreg", c.setmaxnreg}};
}

nlohmann::json sass_evidence_json(const core::KernelEvidence& k) {
  const core::SassProfile& sp = k.sass;
  nlohmann::json lints = nlohmann::json::array();
  for (const core::Lint& l : core::lints(k)) lints.push_back({{"code", l.code}, {"message", l.message}});
  nlohmann::json j = {{"function", sp.function}, {"whole", sass_counts_json(sp.whole)},
                      {"setmaxnreg_kept", sp.whole.setmaxnreg > 0}, {"advisories", k.advisories}, {"lints", lints}};
  if (sp.has_main_loop) j["main_loop"] = sass_counts_json(sp.main_loop);
  return j;
}

std::string sass_line(const nlohmann::json& s) {
  std::string advisories;
  for (const auto& a : s["advisories"]) advisories += fmt::format(" {}", a.get<std::string>());
  std::string loop = "no main loop found";
  if (s.contains("main_loop")) {
    const auto& m = s["main_loop"];
    loop = fmt::format("main loop {} instructions: {} MMA, {} TMA, {} barrier, {} warpgroup arrive/wait, {} local",
                       m["instructions"].get<int>(), m["mma"].get<int>(), m["tma"].get<int>(), m["sync"].get<int>(),
                       m["warpgroup_sync"].get<int>(), m["local_memory"].get<int>());
  }
  std::string lints;
  for (const auto& l : s["lints"])
    lints += fmt::format("\n      lint {}: {}", l["code"].get<std::string>(), l["message"].get<std::string>());
  return fmt::format("      sass: setmaxnreg {}; {}; whole kernel {} local-memory ops; advisories:{}{}",
                     s["setmaxnreg_kept"].get<bool>() ? "kept" : "dropped or unused", loop,
                     s["whole"]["local_memory"].get<int>(), advisories.empty() ? " none" : advisories,
                     lints.empty() ? "; lints: none" : lints);
}

void require_nvdisasm(const std::string& what_needs_it) {
  if (core::find_nvdisasm()) return;
  std::string tried;
  for (const std::string& c : core::nvdisasm_candidates()) tried += " " + c;
  throw core::Error(core::ErrorKind::InvalidInput,
                    fmt::format("{} needs nvdisasm, found at none of:{} (scripts/cuda_tools.sh installs it; "
                                "or set MGPU_NVDISASM)", what_needs_it, tried));
}

}  // namespace mgpu::harness
