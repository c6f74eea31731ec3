#include "harness/cmd_space.h"

#include <iostream>
#include <map>
#include <optional>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/numeric_options.h"
#include "harness/problem_options.h"
#include "harness/space_lints.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {
namespace {

struct Options {
  ArchOption arch;
  MatmulProblemOptions problem;
  bool json = false;
  bool lints = false;  // compile and disassemble every kernel (issue 19): slow
  int jobs = 0;
  int sample = 0;
  std::uint64_t sample_seed = 1;
};

nlohmann::json census_json(const LintCensus& c) {
  nlohmann::json by_code = nlohmann::json::object(), kernels = nlohmann::json::array();
  for (const KernelLintRow& k : c.kernels) {
    nlohmann::json row = {{"config", nlohmann::json::parse(k.config.to_json())}, {"compiled", k.compiled}};
    if (!k.compiled) row["error"] = k.error;
    nlohmann::json list = nlohmann::json::array();
    for (const core::Lint& l : k.lints) {
      list.push_back({{"code", l.code}, {"message", l.message}});
      if (!by_code.contains(l.code)) by_code[l.code] = {{"kernels", c.by_code.at(l.code)}, {"example", row["config"]}, {"message", l.message}};
    }
    row["lints"] = list;
    kernels.push_back(row);
  }
  return {{"kernels", c.kernels.size()}, {"failed", c.failed}, {"clean", c.clean}, {"by_code", by_code},
          {"per_kernel", kernels}, {"wall_s", c.wall_s},
          {"not_counted", "bank-conflicts: counted on the virtual device (mgpu-tune verify), not from the SASS"}};
}

void print_census(const LintCensus& c) {
  fmt::print("lints of {} distinct kernels (SASS through nvdisasm; {:.0f} s): {} clean, {} failed to compile\n",
             c.kernels.size(), c.wall_s, c.clean, c.failed);
  for (const auto& [code, n] : c.by_code) {
    const KernelLintRow* example = nullptr;
    const core::Lint* first = nullptr;
    for (const KernelLintRow& k : c.kernels)
      for (const core::Lint& l : k.lints)
        if (!example && l.code == code) example = &k, first = &l;
    fmt::print("  {:<26} {:>5} kernels  e.g. {}\n      {}\n", code, n, example->config.to_json(), first->message);
  }
  fmt::print("  (bank conflicts are counted on the virtual device: mgpu-tune verify, or a tuning run with --device model)\n");
}

struct Census {
  std::uint64_t total = 0, valid = 0, distinct_kernels = 0;
  std::map<std::string, std::uint64_t> rejected;      // rule -> count
  std::map<std::string, std::string> example_reason;  // rule -> first reason seen
};

Census census(const kernels::MatmulTemplate& t, const kernels::MatmulProblem& p) {
  Census c;
  std::set<std::string> kernels_seen;  // configs minus the run-time parameters
  std::vector<std::string> rt = t.run_time_params();
  t.walk(p, [&](const core::TuningConfig& cfg, const kernels::Rejection* r) {
    ++c.total;
    if (r) {
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
  std::optional<LintCensus> lints;
  if (o.lints)
    lints = lint_census(t, p, o.jobs, o.sample, o.sample_seed,
                        [](const std::string& line) { fmt::print(stderr, "{}\n", line); });
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
    if (lints) j["lints"] = census_json(*lints);
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
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
  if (lints) print_census(*lints);
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
  auto* lints = mm->add_flag("--lints", o->lints,
               "Also compile every valid config's kernel and show the performance lints its machine code has "
               "(nvdisasm; slow: a progress line per batch on stderr)");
  mm->add_option("--sample", o->sample,
                 "With --lints: only this many configs, reaching every value of every parameter")
      ->check(whole_number(1, 1000000))
      ->needs(lints);
  mm->add_option("--sample-seed", o->sample_seed, "Seed of --sample's random part")
      ->check(whole_number(0))  // an unsigned option would take "-1" as 2^64-1
      ->capture_default_str()
      ->needs(lints);
  mm->add_option("-j,--jobs", o->jobs, "With --lints: compile threads (default: one per hardware thread)")
      ->check(whole_number(1, 4096))
      ->needs(lints);
  mm->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
