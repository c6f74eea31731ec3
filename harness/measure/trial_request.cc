#include "harness/measure/trial_request.h"

#include <nlohmann/json.hpp>

namespace mgpu::harness {

void to_json(nlohmann::json& j, const TrialRequest& r) {
  const kernels::MatmulProblem& p = r.problem;
  j = {{"arch", r.arch},
       {"problem", r.op == "matmul" ? nlohmann::json{{"m", p.m}, {"n", p.n}, {"k", p.k}, {"dtype", to_string(p.in_dtype)},
                                                     {"out_dtype", to_string(p.out_dtype)}, {"layout", to_string(p.b_layout)}}
                                    : nlohmann::json{{"op", r.op}, {"key", r.problem_key}}},
       {"config", nlohmann::json::parse(r.config.to_json())},
       {"measurer", r.measurer},
       {"rule", {{"min_samples", r.rule.min_samples}, {"max_noise", r.rule.max_noise},
                 {"min_time_s", r.rule.min_time_s}, {"max_time_s", r.rule.max_time_s}}},
       {"verify", r.verify},
       {"compile", r.compile},
       {"timer", r.timer},
       {"debug_fault", r.debug_fault},
       {"seeds", r.seeds},
       {"sm_count", r.sm_count}};
  const kernels::KernelDefects& d = r.defects;
  if (d.known)
    j["defects"] = {{"serialised_mma", static_cast<int>(d.serialised_mma)}, {"setmaxnreg_dropped", d.setmaxnreg_dropped},
                    {"spill_bytes", d.spill_bytes}, {"main_loop_local_ops", d.main_loop_local_ops},
                    {"epilogue_bank_ways", d.epilogue_bank_ways}};
}

void from_json(const nlohmann::json& j, TrialRequest& r) {
  r.arch = j.at("arch").get<std::string>();
  const nlohmann::json& p = j.at("problem");
  if (p.contains("op")) {
    r.op = p.at("op").get<std::string>();
    r.problem_key = p.at("key").get<std::string>();
  } else {
  r.problem.m = p.at("m");
  r.problem.n = p.at("n");
  r.problem.k = p.at("k");
  r.problem.in_dtype = kernels::parse_dtype(p.at("dtype").get<std::string>());
  r.problem.out_dtype = kernels::parse_dtype(p.at("out_dtype").get<std::string>());
  r.problem.b_layout = kernels::parse_b_layout(p.at("layout").get<std::string>());
  }
  r.config = core::TuningConfig::from_json(j.at("config").dump());
  r.measurer = j.at("measurer").get<std::string>();
  const nlohmann::json& rule = j.at("rule");
  r.rule = {rule.at("min_samples"), rule.at("max_noise"), rule.at("min_time_s"), rule.at("max_time_s")};
  r.verify = j.value("verify", true);
  r.compile = j.value("compile", true);
  r.timer = j.value("timer", "auto");
  r.debug_fault = j.value("debug_fault", "");
  r.seeds = j.value("seeds", 1);
  r.sm_count = j.value("sm_count", 0);
  if (j.contains("defects")) {
    const nlohmann::json& d = j.at("defects");
    r.defects.known = true;
    r.defects.serialised_mma = static_cast<kernels::KernelDefects::Serialised>(d.value("serialised_mma", 0));
    r.defects.setmaxnreg_dropped = d.value("setmaxnreg_dropped", false);
    r.defects.spill_bytes = d.value("spill_bytes", 0);
    r.defects.main_loop_local_ops = d.value("main_loop_local_ops", 0);
    r.defects.epilogue_bank_ways = d.value("epilogue_bank_ways", 1.0);
  }
}

}  // namespace mgpu::harness
