#include "harness/op/problem_flags.h"

#include <fmt/format.h>

namespace mgpu::harness {

void ProblemFlags::add(CLI::App& cmd, const kernels::OpTemplate& t) {
  for (const kernels::ProblemFlag& f : t.problem_flags()) {
    std::string& value = values_[f.name];
    if (f.is_switch) {
      options_.push_back(cmd.add_flag_callback("--" + f.name, [&value] { value = "true"; }, f.help));
      continue;
    }
    value = f.default_value;
    std::string help = f.help;
    if (!f.choices.empty()) help += fmt::format(" ({})", fmt::join(f.choices, ", "));
    // Text, checked by the template: its message names the flag and the range.
    CLI::Option* opt = cmd.add_option("--" + f.name, value, help);
    if (!f.default_value.empty()) opt->capture_default_str();
    const bool number = !f.default_value.empty() && f.default_value.find_first_not_of("0123456789") == std::string::npos;
    opt->type_name(!f.choices.empty() ? "CHOICE" : number || f.default_value.empty() ? "INT" : "TEXT");
    options_.push_back(opt);
  }
}

bool ProblemFlags::given() const {
  for (const CLI::Option* o : options_)
    if (o->count() > 0) return true;
  return false;
}

}  // namespace mgpu::harness
