#include "harness/cmd_matmul.h"

#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "harness/problem_options.h"

namespace mgpu::harness {

void add_matmul_command(CLI::App& app) {
  struct Options {
    ArchOption arch;
    MatmulProblemOptions problem;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("matmul", "Tune C = A . B for one target and problem, record every trial");
  opts->arch.add(*cmd);
  opts->problem.add(*cmd);
  cmd->callback([opts] {
    const core::ArchSpec& arch = opts->arch.resolve();
    kernels::MatmulProblem p = opts->problem.resolve();
    fmt::print("mgpu-tune matmul: {} ({}), C[{}x{}] {} = A[{}x{}] {} . B ({}) {}, {:.3g} GFLOP\n",
               arch.name, arch.family, p.m, p.n, to_string(p.out_dtype), p.m, p.k,
               to_string(p.in_dtype), to_string(p.b_layout), to_string(p.in_dtype), p.flops() / 1e9);
    throw core::Error(core::ErrorKind::Unavailable,
                      fmt::format("the {} matmul template is not built yet, so there is nothing to "
                                  "tune; no result was produced",
                                  arch.name));
  });
}

}  // namespace mgpu::harness
