// The checks every option of a command line gets, whoever declared it, applied once to the
// whole tree of subcommands after they are added (mgpu-tune's and mgpu-bench's). Contract:
// check_every_option() gives each option that takes a value and has no number check of its own
// (numeric_options.h) one: a whole number for an integer option (CLI11 took "" as 0, saturated
// 99999999999999999999 and read "010" as octal), and for any other option a refusal of the empty
// value, naming the option (exit 2): '--db ""' or '--run ""' would otherwise mean the default, or
// everything, without a word. Every whole-number check then hands CLI11 the canonical decimal
// of what was typed, so "010" is 10.
#pragma once

#include <CLI/CLI.hpp>

namespace mgpu::harness {

void check_every_option(CLI::App& app);

}  // namespace mgpu::harness
