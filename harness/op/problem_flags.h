// An op's problem flags (kernels/op_template.h ProblemFlag) on a CLI11 command, and the
// problem they give. Contract: every flag shows its default in --help; values are checked by
// the template (problem() throws Error{InvalidInput} naming the flag); given() is whether the
// user set any of them.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "kernels/op_template.h"

namespace mgpu::harness {

class ProblemFlags {
 public:
  void add(CLI::App& cmd, const kernels::OpTemplate& t);
  kernels::Problem problem(const kernels::OpTemplate& t) const { return t.problem(values_); }
  bool given() const;
  // The values the user set on the command line, by flag name (a switch: "true").
  std::map<std::string, std::string> given_values() const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::pair<std::string, CLI::Option*>> options_;
};

}  // namespace mgpu::harness
