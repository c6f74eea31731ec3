#include "kernels/op_registry.h"

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/attention/template.h"

namespace mgpu::kernels {

const std::vector<OpEntry>& ops() {
  static const std::vector<OpEntry> entries = {
      {"attention", "sm_90a", "sm_90a", attention::attention_template},
  };
  return entries;
}

const OpTemplate& op_template(std::string_view op, const core::ArchSpec& arch) {
  for (const OpEntry& e : ops())
    if (e.op == op) return e.for_arch(arch);
  throw core::Error(core::ErrorKind::InvalidInput, fmt::format("there is no op '{}'", op));
}

}  // namespace mgpu::kernels
