#include "harness/sass_report.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/sass/kernel_evidence.h"
#include "core/sass/nvdisasm.h"

namespace mgpu::harness {

nlohmann::json sass_evidence_json(const core::KernelEvidence& k) {
  const core::SassProfile& sp = k.sass;
  nlohmann::json lints = nlohmann::json::array();
  for (const core::Lint& l : core::lints(k)) lints.push_back({{"code", l.code}, {"message", l.message}});
  nlohmann::json j = {{"function", sp.function}, {"whole", core::sass_counts_json(sp.whole)},
                      {"setmaxnreg_kept", sp.whole.setmaxnreg > 0},
                      {"register_budgets", core::register_budgets_json(sp.register_budgets)},
                      {"advisories", k.advisories}, {"lints", lints}};
  if (sp.has_main_loop) j["main_loop"] = core::sass_counts_json(sp.main_loop);
  if (sp.has_epilogue) j["epilogue"] = core::sass_counts_json(sp.epilogue);
  if (k.ptx_main_loop_warpgroup_sync) j["ptx_main_loop_warpgroup_sync"] = *k.ptx_main_loop_warpgroup_sync;
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
    if (int w = m.value("wide_membar", 0)) loop += fmt::format(", {} GPU-wide MEMBAR", w);
  }
  if (s.contains("epilogue")) {
    const auto& e = s["epilogue"];
    loop += fmt::format("; epilogue {} instructions: {} shared stores, {} TMA, {} barrier, {} local, {} MMA",
                        e["instructions"].get<int>(), e.value("shared_store", 0), e["tma"].get<int>(),
                        e["sync"].get<int>(), e["local_memory"].get<int>(), e["mma"].get<int>());
  }
  std::string budgets;
  for (const auto& b : s.value("register_budgets", nlohmann::json::array()))
    budgets += fmt::format("{}{} to {}", budgets.empty() ? "" : ", ", b["raise"].get<bool>() ? "raise" : "release",
                           b["registers"].get<int>());
  std::string lints;
  for (const auto& l : s["lints"])
    lints += fmt::format("\n      lint {}: {}", l["code"].get<std::string>(), l["message"].get<std::string>());
  return fmt::format("      sass: setmaxnreg {}; {}; whole kernel {} local-memory ops; advisories:{}{}",
                     s["setmaxnreg_kept"].get<bool>() ? fmt::format("kept (registers per role: {})", budgets)
                                                      : std::string("dropped or unused"),
                     loop,
                     s["whole"]["local_memory"].get<int>(), advisories.empty() ? " none" : advisories,
                     lints.empty() ? "; lints: none" : lints);
}

void require_nvdisasm(const std::string& what_needs_it) {
  if (core::find_nvdisasm()) return;
  // MGPU_NVDISASM naming no tool is the environment's problem (exit 1), not the command's.
  const core::ErrorKind kind =
      core::nvdisasm_setting_problem() ? core::ErrorKind::Unavailable : core::ErrorKind::InvalidInput;
  throw core::Error(kind, fmt::format("{} needs nvdisasm: {}", what_needs_it, core::why_no_nvdisasm()));
}

}  // namespace mgpu::harness
