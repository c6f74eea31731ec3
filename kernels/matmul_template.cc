#include "kernels/matmul_template.h"

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/matmul_sm100/template.h"
#include "kernels/matmul_sm90/template.h"

namespace mgpu::kernels {

void MatmulTemplate::require_valid(const MatmulProblem& p, const core::TuningConfig& c) const {
  check_config(c);
  if (auto r = why_invalid(p, c))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
}

const MatmulTemplate& matmul_template(const core::ArchSpec& arch) {
  for (const MatmulTemplate* t : {&sm90::hopper_matmul(), &sm100::blackwell_matmul()})
    if (arch.name == t->arch().name) return *t;
  throw core::Error(core::ErrorKind::Unavailable, fmt::format("there is no matmul template for {}", arch.name));
}

}  // namespace mgpu::kernels
