#include "kernels/op_registry.h"

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/attention/template.h"
#include "kernels/matmul_op.h"

namespace mgpu::kernels {

const std::vector<OpEntry>& ops() {
  static const std::vector<OpEntry> entries = {
      {"matmul", "sm_90a, sm_100a", "sm_90a", matmul_op, matmul_op_suites, /*dedicated_commands=*/true},
      {"attention", "sm_90a", "sm_90a", attention::attention_template, attention_suites},
  };
  return entries;
}

const OpTemplate& op_template(std::string_view op, const core::ArchSpec& arch) {
  for (const OpEntry& e : ops())
    if (e.op == op) {
      try {
        return e.for_arch(arch);
      } catch (const core::Error& err) {
        // The target is the user's choice: one the op has no template for is bad input.
        if (err.kind() != core::ErrorKind::Unavailable) throw;
        throw core::Error(core::ErrorKind::InvalidInput, err.what());  // it names the targets there are
      }
    }
  throw core::Error(core::ErrorKind::InvalidInput, fmt::format("there is no op '{}'", op));
}

}  // namespace mgpu::kernels
