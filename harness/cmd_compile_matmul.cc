#include "harness/cmd_compile_matmul.h"

#include <memory>

#include "core/error.h"
#include "harness/compile_configs.h"
#include "harness/config_option.h"
#include "harness/problem_options.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {
namespace {

struct Options {
  ArchOption arch;
  MatmulProblemOptions problem;
  std::string config_json;
  bool all = false;
  CompileFlags compile;
};

void run(const Options& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  kernels::MatmulProblem p = o.problem.resolve();
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  t.check_problem(p);
  if (o.all == !o.config_json.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "give exactly one of --config JSON and --all");
  std::vector<ConfigToCompile> configs;
  auto add = [&](const core::TuningConfig& c) {
    // Configs that differ only in run-time parameters build the same kernel: built once.
    core::TuningConfig kernel_key = c;
    for (const std::string& name : t.run_time_params()) kernel_key.set(name, std::int64_t{0});
    configs.push_back({c, p.key(), kernel_key.to_json()});
  };
  if (o.all) {
    for (const core::TuningConfig& c : t.valid_configs({p})) add(c);
  } else {
    core::TuningConfig c = config_from_user(t, o.config_json);
    t.require_valid(p, c);
    add(c);
  }
  compile_configs(arch, std::string(t.name()), p.key(), configs, [&](const ConfigToCompile& c) {
    core::BuiltKernel b = t.build(p, c.config);
    return KernelBuild{b.mlir, b.kernel_name, b.dynamic_smem_bytes, b.cluster_size};
  }, o.compile);
}

}  // namespace

void add_compile_matmul_subcommand(CLI::App& compile) {
  auto o = std::make_shared<Options>();
  auto* cmd = compile.add_subcommand("matmul", "Compile matmul template configs in parallel");
  o->arch.add(*cmd);
  o->problem.add(*cmd);
  cmd->add_option("--config", o->config_json,
                  "One config as JSON (see 'mgpu-tune space matmul' for names); fields left out take the "
                  "template's defaults, named on stderr");
  cmd->add_flag("--all", o->all, "Every valid config of the default space");
  o->compile.add(*cmd);
  cmd->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
