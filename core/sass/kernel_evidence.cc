#include "core/sass/kernel_evidence.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sass/nvdisasm.h"
#include "core/sass/ptx_main_loop.h"
#include "core/sass/sass_profile.h"

namespace mgpu::core {
namespace {

SassCounts counts_from(const nlohmann::json& j) {
  SassCounts c;
  c.instructions = j.value("instructions", 0);
  c.mma = j.value("mma", 0);
  c.tma = j.value("tma", 0);
  c.sync = j.value("sync", 0);
  c.warpgroup_sync = j.value("warpgroup_sync", 0);
  c.local_memory = j.value("local_memory", 0);
  c.setmaxnreg = j.value("setmaxnreg", 0);
  c.shared_store = j.value("shared_store", 0);
  c.wide_membar = j.value("wide_membar", 0);
  return c;
}

}  // namespace

nlohmann::json sass_counts_json(const SassCounts& c) {
  return {{"instructions", c.instructions}, {"mma", c.mma},     {"tma", c.tma},
          {"sync", c.sync},                 {"warpgroup_sync", c.warpgroup_sync},
          {"local_memory", c.local_memory}, {"setmaxnreg", c.setmaxnreg}, {"shared_store", c.shared_store},
          {"wide_membar", c.wide_membar}};
}

nlohmann::json register_budgets_json(const std::vector<RegisterBudget>& budgets) {
  nlohmann::json a = nlohmann::json::array();
  for (const RegisterBudget& b : budgets) a.push_back({{"raise", b.raise}, {"registers", b.registers}});
  return a;
}

KernelEvidence evidence_of(const CompiledUnit& unit, const std::string& kernel_name) {
  KernelEvidence k;
  k.sass = profile_sass(disassemble(unit.cubin.image));
  k.advisories = assembler_advisories(unit.cubin.log);
  auto it = unit.cubin.kernels.find(kernel_name);
  if (it != unit.cubin.kernels.end()) k.spill_store_bytes = it->second.spill_store_bytes;
  k.ptx_has_setmaxnreg = unit.ptx.find("setmaxnreg") != std::string::npos;
  if (const PtxMainLoop loop = ptx_main_loop(unit.ptx); loop.found) k.ptx_main_loop_warpgroup_sync = loop.warpgroup_sync;
  return k;
}

std::string evidence_json(const KernelEvidence& k) {
  nlohmann::json j = {{"function", k.sass.function},
                      {"whole", sass_counts_json(k.sass.whole)},
                      {"has_main_loop", k.sass.has_main_loop},
                      {"main_loop", sass_counts_json(k.sass.main_loop)},
                      {"has_epilogue", k.sass.has_epilogue},
                      {"epilogue", sass_counts_json(k.sass.epilogue)},
                      {"register_budgets", register_budgets_json(k.sass.register_budgets)},
                      {"advisories", k.advisories},
                      {"spill_store_bytes", k.spill_store_bytes},
                      {"ptx_has_setmaxnreg", k.ptx_has_setmaxnreg}};
  if (k.ptx_main_loop_warpgroup_sync) j["ptx_main_loop_warpgroup_sync"] = *k.ptx_main_loop_warpgroup_sync;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

KernelEvidence evidence_from_json(std::string_view text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    KernelEvidence k;
    k.sass.function = j.value("function", std::string());
    k.sass.whole = counts_from(j.value("whole", nlohmann::json::object()));
    k.sass.has_main_loop = j.value("has_main_loop", false);
    k.sass.main_loop = counts_from(j.value("main_loop", nlohmann::json::object()));
    k.sass.has_epilogue = j.value("has_epilogue", false);
    k.sass.epilogue = counts_from(j.value("epilogue", nlohmann::json::object()));
    for (const nlohmann::json& b : j.value("register_budgets", nlohmann::json::array()))
      k.sass.register_budgets.push_back({b.value("raise", false), b.value("registers", 0)});
    k.advisories = j.value("advisories", std::vector<std::string>{});
    k.spill_store_bytes = j.value("spill_store_bytes", 0);
    k.ptx_has_setmaxnreg = j.value("ptx_has_setmaxnreg", false);
    if (j.contains("ptx_main_loop_warpgroup_sync"))
      k.ptx_main_loop_warpgroup_sync = j["ptx_main_loop_warpgroup_sync"].get<int>();
    return k;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("unreadable kernel evidence: {}", e.what()));
  }
}

std::string lints_json(const std::vector<Lint>& lints) {
  nlohmann::json a = nlohmann::json::array();
  for (const Lint& l : lints) a.push_back({{"code", l.code}, {"message", l.message}});
  return a.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mgpu::core
