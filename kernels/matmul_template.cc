#include "kernels/matmul_template.h"

#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/matmul_sm100/template.h"
#include "kernels/matmul_sm90/template.h"

namespace mgpu::kernels {

bool MatmulTemplate::accepts(const MatmulProblem& p) const {
  try {
    check_problem(p);
    return true;
  } catch (const core::Error&) {
    return false;
  }
}

void MatmulTemplate::require_valid(const MatmulProblem& p, const core::TuningConfig& c) const {
  check_config(c);
  if (auto r = why_invalid(p, c))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
}

std::vector<core::TuningConfig> MatmulTemplate::valid_configs(const std::vector<MatmulProblem>& problems,
                                                              const std::atomic<bool>* stop) const {
  // One walk per problem; a config valid at several is kept once, at its place in the walk.
  std::map<std::uint64_t, core::TuningConfig> picked;
  for (const MatmulProblem& p : problems) {
    std::uint64_t n = 0;
    walk(p, [&](const core::TuningConfig& c, const Rejection* why) {
      if (!why) picked.try_emplace(n, c);
      ++n;
    }, stop);
    if (stop && stop->load()) return {};
  }
  std::vector<core::TuningConfig> out;
  out.reserve(picked.size());
  for (auto& [n, c] : picked) out.push_back(std::move(c));
  return out;
}

const MatmulTemplate& matmul_template(const core::ArchSpec& arch) {
  for (const MatmulTemplate* t : {&sm90::hopper_matmul(), &sm100::blackwell_matmul()})
    if (arch.name == t->arch().name) return *t;
  throw core::Error(core::ErrorKind::Unavailable, fmt::format("there is no matmul template for {}", arch.name));
}

}  // namespace mgpu::kernels
