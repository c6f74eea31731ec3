#include "harness/op/problem_flags.h"

#include <fmt/format.h>

#include "harness/numeric_options.h"

namespace mgpu::harness {

void ProblemFlags::add(CLI::App& cmd, const kernels::OpTemplate& t) {
  for (const kernels::ProblemFlag& f : t.problem_flags()) {
    std::string& value = values_[f.name];
    if (f.is_switch) {
      options_.emplace_back(f.name, cmd.add_flag_callback("--" + f.name, [&value] { value = "true"; }, f.help));
      continue;
    }
    value = f.default_value;
    std::string help = f.help;
    if (!f.choices.empty()) help += fmt::format(" ({})", fmt::join(f.choices, ", "));
    // Text, checked by the template: its message names the flag and the range.
    CLI::Option* opt = cmd.add_option("--" + f.name, value, help);
    if (!f.default_value.empty()) opt->capture_default_str();
    if (f.max > 0) opt->check(whole_number(f.min, f.max));  // says the range, and refuses '' too
    opt->type_name(!f.choices.empty() ? "CHOICE" : f.max > 0 ? "INT" : "TEXT");
    options_.emplace_back(f.name, opt);
  }
}

bool ProblemFlags::given() const {
  for (const auto& [name, o] : options_)
    if (o->count() > 0) return true;
  return false;
}

std::map<std::string, std::string> ProblemFlags::given_values() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, o] : options_)
    if (o->count() > 0) out[name] = values_.at(name);
  return out;
}

}  // namespace mgpu::harness
