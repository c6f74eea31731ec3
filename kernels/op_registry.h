// The ops whose templates speak kernels/op_template.h, by name: what the op-generic commands
// (`mgpu-tune <op>`, `space <op>`, `verify <op>`) are made from (matmul has its own: see
// OpEntry::dedicated_commands), and where a template is found by its op or name. Adding an op is one entry in
// op_registry.cc. Contract: op_template() returns the op's template for `arch`, or throws
// Error{InvalidInput} naming the targets the op has (the target is the user's choice); ops()
// lists the entries in order.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch.h"
#include "kernels/op_suites.h"
#include "kernels/op_template.h"

namespace mgpu::kernels {

struct OpEntry {
  std::string op;                  // "attention"
  std::string archs;               // the targets it has, for --help ("sm_90a")
  std::string default_arch;
  std::function<const OpTemplate&(const core::ArchSpec&)> for_arch;  // throws Error{Unavailable}
  std::function<std::vector<OpSuite>()> suites;                       // named problem suites
  // The op's commands are its own, not the op-generic ones (matmul's: `matmul`, `space matmul`,
  // `verify matmul`, ... with shape suites from CSV files, warm starts, replays and bucketing
  // the generic commands do not have yet); every other use of the registry -- listing the ops,
  // finding a template by name, its space and problems -- serves it as any op.
  bool dedicated_commands = false;
};

const std::vector<OpEntry>& ops();
const OpTemplate& op_template(std::string_view op, const core::ArchSpec& arch);

}  // namespace mgpu::kernels
