#include "harness/option_checks.h"

#include <cstdint>
#include <limits>
#include <string>

#include "harness/numeric_options.h"

namespace mgpu::harness {
namespace {

CLI::Validator* find_check(CLI::Option* opt, const char* name) {
  try {
    return opt->get_validator(name);
  } catch (const CLI::OptionNotFound&) {
    return nullptr;
  }
}

// CLI11 names an option's type INT (signed) or UINT (unsigned) after its C++ type; the
// validators' descriptions follow a ':'.
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// A number check for an integer option that declared none: the range of its type as far as
// CLI11 tells (int64 for every signed one; the option's own checks may narrow it).
CLI::Validator any_whole_number(bool is_unsigned) {
  CLI::Validator v = whole_number(is_unsigned ? 0 : std::numeric_limits<std::int64_t>::min());
  v.description("");  // the help stays as it was
  return v;
}

CLI::Validator not_empty(bool positional) {
  std::string why = positional ? "an empty value ('') is not taken: give one"
                               : "an empty value ('') is not taken: give one, or leave the option out";
  return CLI::Validator([why](std::string& text) { return text.empty() ? why : std::string(); }, "", "not empty");
}

void add_check(CLI::Option* opt) {
  if (find_check(opt, kWholeNumberCheck) || find_check(opt, kFiniteNumberCheck)) return;  // says "got ''" itself
  const std::string type = opt->get_type_name();
  if (starts_with(type, "UINT") || starts_with(type, "INT")) opt->check(any_whole_number(starts_with(type, "UINT")));
  else opt->check(not_empty(opt->get_positional() && !opt->nonpositional()));
}

void check_option(CLI::Option* opt) {
  if (opt->get_type_size() == 0) return;  // a flag
  add_check(opt);
  // ->check() makes a validator work on a copy of the text; the whole number's canonical
  // decimal must reach CLI11's conversion, which would read "010" as octal.
  if (CLI::Validator* whole = find_check(opt, kWholeNumberCheck)) whole->non_modifying(false);
}

}  // namespace

void check_every_option(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) check_option(opt);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_every_option(*sub);
}

}  // namespace mgpu::harness
