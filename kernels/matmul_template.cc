#include "kernels/matmul_template.h"

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/matmul_sm90/template.h"

namespace mgpu::kernels {

void MatmulTemplate::require_valid(const MatmulProblem& p, const core::TuningConfig& c) const {
  check_config(c);
  if (auto r = why_invalid(p, c))
    throw core::Error(core::ErrorKind::InvalidInput, fmt::format("invalid config ({}): {}", r->rule, r->reason));
}

const MatmulTemplate& matmul_template(const core::ArchSpec& arch) {
  const MatmulTemplate& hopper = sm90::hopper_matmul();
  if (arch.name == hopper.arch().name) return hopper;
  throw core::Error(core::ErrorKind::Unavailable,
                    fmt::format("there is no matmul template for {} yet (the sm_100a tcgen05 template is issue #8)",
                                arch.name));
}

}  // namespace mgpu::kernels
