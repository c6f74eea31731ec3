// The ops whose templates speak kernels/op_template.h, by name: what the op-generic commands
// (`mgpu-tune <op>`, `space <op>`, `verify <op>`) are made from. Adding an op is one entry in
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
};

const std::vector<OpEntry>& ops();
const OpTemplate& op_template(std::string_view op, const core::ArchSpec& arch);

}  // namespace mgpu::kernels
