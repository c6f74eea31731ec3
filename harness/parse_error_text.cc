#include "harness/parse_error_text.h"

#include <regex>

#include <fmt/format.h>

namespace mgpu::harness {
namespace {

// The deepest subcommand parsed so far: where the command line's words went.
const CLI::App* deepest(const CLI::App& app) {
  const CLI::App* a = &app;
  for (;;) {
    const auto subs = a->get_subcommands();
    if (subs.empty()) return a;
    a = subs.back();
  }
}

const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::App* a = deepest(app); a; a = a->get_parent())
    if (const CLI::Option* o = a->get_option_no_throw(name)) return o;
  return nullptr;
}

std::string times(const std::string& n) { return n == "1" ? "once" : n == "2" ? "twice" : n + " times"; }

}  // namespace

std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e) {
  const std::string what = e.what();
  std::smatch m;
  // CLI11 4.x/2.x wording (CLI/Error.hpp), matched whole: anything else passes unchanged.
  if (std::regex_match(what, m, std::regex(R"((\S+): At Most (\d+) required but received (\d+))"))) {
    if (m[2] == "1") return fmt::format("{} was given {}: give it once", m[1].str(), times(m[3]));
    return fmt::format("{} takes at most {} values, and {} were given", m[1].str(), m[2].str(), m[3].str());
  }
  if (std::regex_match(what, m, std::regex(R"((\S+): At least (\d+) required but received (\d+))")))
    return fmt::format("{} takes at least {} values, and {} were given", m[1].str(), m[2].str(), m[3].str());
  if (std::regex_match(what, m, std::regex(R"(Expected exactly (\d+) arguments to (\S+), got (\d+))")))
    return fmt::format("{} takes {} value{}, and {} were given", m[2].str(), m[1].str(), m[1] == "1" ? "" : "s",
                       m[3].str());
  if (std::regex_match(what, m, std::regex(R"(Could not convert: (\S+) = (.*))")) ||
      std::regex_match(what, m, std::regex(R"((\S+): Should be true/false or a number())"))) {
    const CLI::Option* o = find_option(app, m[1].str());
    if (o && o->get_expected_min() == 0)  // a switch given a value it does not know
      return fmt::format("{} is a switch: give it alone, or as {}=true or {}=false{}", m[1].str(), m[1].str(),
                         m[1].str(), m[2].length() ? fmt::format(" (not '{}')", m[2].str()) : "");
    return fmt::format("{}: '{}' is not a value it takes{}", m[1].str(), m[2].str(),
                       o && !o->get_type_name().empty() ? fmt::format(" (it takes {})", o->get_type_name()) : "");
  }
  if (std::regex_match(what, m, std::regex(R"(([^-\s]\S*) is required)"))) {  // a positional, by its name
    const CLI::Option* o = find_option(app, m[1].str());
    return fmt::format("no {} given{}", m[1].str(),
                       o && !o->get_description().empty() ? fmt::format(": {}", o->get_description()) : "");
  }
  if (std::regex_match(what, m, std::regex(R"(The following arguments? (?:was|were) not expected: (.*))"))) {
    // CLI11 joins them last first ("x --bogus" for --bogus x: round 20, F60); its list of what was
    // left keeps them in the order typed.
    const CLI::App* a = deepest(app);
    std::string typed;
    for (const std::string& arg : a->remaining(true)) typed += (typed.empty() ? "" : " ") + arg;
    return fmt::format("not an option or value this command takes: {}", typed.empty() ? m[1].str() : typed);
  }
  return what;
}

}  // namespace mgpu::harness
