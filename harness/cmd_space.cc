#include "harness/cmd_space.h"

#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/problem_options.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {
namespace {

struct Options {
  ArchOption arch;
  MatmulProblemOptions problem;
  bool json = false;
};

struct Census {
  std::uint64_t total = 0, valid = 0, distinct_kernels = 0;
  std::map<std::string, std::uint64_t> rejected;      // rule -> count
  std::map<std::string, std::string> example_reason;  // rule -> first reason seen
};

Census census(const kernels::MatmulTemplate& t, const kernels::MatmulProblem& p) {
  Census c;
  std::set<std::string> kernels_seen;  // configs minus the run-time parameters
  std::vector<std::string> rt = t.run_time_params();
  t.space().enumerate([&](const core::TuningConfig& cfg) {
    ++c.total;
    if (auto r = t.why_invalid(p, cfg)) {
      ++c.rejected[r->rule];
      c.example_reason.emplace(r->rule, r->reason);
      return;
    }
    ++c.valid;
    core::TuningConfig key = cfg;
    for (const std::string& name : rt) key.set(name, std::int64_t{0});
    kernels_seen.insert(key.to_json());
  });
  c.distinct_kernels = kernels_seen.size();
  return c;
}

void run(const Options& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  kernels::MatmulProblem p = o.problem.resolve();
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  t.check_problem(p);
  core::ParamSpace space = t.space();
  Census c = census(t, p);
  std::vector<std::string> rt = t.run_time_params();
  auto is_rt = [&](const std::string& n) { return std::find(rt.begin(), rt.end(), n) != rt.end(); };
  if (o.json) {
    nlohmann::json params = nlohmann::json::array();
    for (const core::Param& prm : space.params()) {
      nlohmann::json dom = nlohmann::json::array();
      for (const core::ParamValue& v : prm.domain) {
        if (std::holds_alternative<std::int64_t>(v)) dom.push_back(std::get<std::int64_t>(v));
        else dom.push_back(std::get<std::string>(v));
      }
      params.push_back({{"name", prm.name}, {"domain", dom}, {"help", prm.help}, {"run_time", is_rt(prm.name)}});
    }
    nlohmann::json rejected = nlohmann::json::object();
    for (auto& [rule, n] : c.rejected) rejected[rule] = {{"count", n}, {"example", c.example_reason[rule]}};
    nlohmann::json j = {{"template", t.name()}, {"arch", arch.name}, {"problem", p.key()}, {"parameters", params},
                        {"total", c.total}, {"valid", c.valid}, {"distinct_kernels", c.distinct_kernels},
                        {"rejected", rejected}, {"default_config", nlohmann::json::parse(t.default_config().to_json())}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  fmt::print("{} for {} ({}), problem {}\n", t.name(), arch.name, arch.family, p.key());
  for (const core::Param& prm : space.params()) {
    std::string dom;
    for (const core::ParamValue& v : prm.domain) dom += (dom.empty() ? "" : ", ") + core::to_string(v);
    fmt::print("  {:<22} {{{}}}{}\n      {}\n", prm.name, dom, is_rt(prm.name) ? "  (run time: no recompile)" : "",
               prm.help);
  }
  fmt::print("{} configs, {} valid ({} distinct kernels to compile), {} rejected:\n", c.total, c.valid,
             c.distinct_kernels, c.total - c.valid);
  for (auto& [rule, n] : c.rejected) fmt::print("  {:<10} {:>6}  e.g. {}\n", rule, n, c.example_reason[rule]);
  fmt::print("default config: {}\n", t.default_config().to_json());
}

}  // namespace

void add_space_command(CLI::App& app) {
  auto* space = app.add_subcommand("space", "Show a template's search space and which configs are valid");
  space->require_subcommand(1);
  auto o = std::make_shared<Options>();
  auto* mm = space->add_subcommand("matmul", "The matmul template's space for a target and problem");
  o->arch.add(*mm);
  o->problem.add(*mm);
  mm->add_flag("--json", o->json, "Print JSON");
  mm->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
