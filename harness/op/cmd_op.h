// The commands of every op in kernels/op_registry.h, made from its template alone:
//   mgpu-tune <op>          tune one problem (the op's problem flags), recording every trial
//   mgpu-tune space <op>    the space, which configs are valid and why not, the model's ranking
//   mgpu-tune verify <op>   prove configs on the virtual device at the op's problem classes
// Call after add_space_command() and add_verify_command(): the subcommands join theirs.
#pragma once

#include <CLI/CLI.hpp>

namespace mgpu::harness {

void add_op_commands(CLI::App& app);

}  // namespace mgpu::harness
