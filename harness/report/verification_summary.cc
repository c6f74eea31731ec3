#include "harness/report/verification_summary.h"

#include <array>
#include <map>
#include <utility>

#include "results/stored_config.h"

namespace mgpu::harness {

nlohmann::json verification_summary(results::Store& store) {
  results::TrialFilter emulated;
  emulated.source = "emulate";
  int passed = 0, failed = 0, inconclusive = 0;
  // template -> parameter -> value (its JSON text, to tell 64 from "64") -> {value, passed, failed}
  std::map<std::string, std::map<std::string, std::map<std::string, std::pair<nlohmann::json, std::array<int, 2>>>>>
      counts;
  nlohmann::json failures = nlohmann::json::array();
  for (const results::TrialRow& t : store.trials(emulated)) {
    if (t.status == "env_error") {
      ++inconclusive;
      continue;
    }
    const bool ok = t.status == "ok";
    (ok ? passed : failed) += 1;
    nlohmann::json config = nlohmann::json::parse(results::stored_config_text(store.path(), t.id, t.config_json).to_json());
    for (auto& [name, value] : config.items()) {
      auto& [v, pf] = counts[t.tmpl.name][name][value.dump()];
      v = value;
      ++pf[ok ? 0 : 1];
    }
    if (!ok)
      failures.push_back({{"trial", t.uuid}, {"run", t.run_id}, {"template", t.tmpl.name}, {"problem", t.problem.key},
                          {"problem_class", t.problem_class}, {"kernel_hash", t.kernel_hash}, {"config", config},
                          {"status", t.status}, {"message", t.message}});
  }
  nlohmann::json templates = nlohmann::json::array();
  for (auto& [tmpl, params] : counts) {
    nlohmann::json by_param = nlohmann::json::object();
    for (auto& [name, values] : params) {
      nlohmann::json list = nlohmann::json::array();
      for (auto& [text, vp] : values) list.push_back({{"value", vp.first}, {"passed", vp.second[0]}, {"failed", vp.second[1]}});
      by_param[name] = list;
    }
    templates.push_back({{"template", tmpl}, {"params", by_param}});
  }
  return {{"passed", passed}, {"failed", failed}, {"inconclusive", inconclusive}, {"templates", templates},
          {"failures", failures}};
}

}  // namespace mgpu::harness
