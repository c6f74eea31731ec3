#include "core/json_input.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core {
namespace {

using Event = nlohmann::json::parse_event_t;

// A key as a message shows it: quoted, short however long it is.
std::string shown_key(const std::string& key) {
  std::string s = nlohmann::json(key).dump();
  return s.size() > 60 ? s.substr(0, 57) + "...\"" : s;
}

}  // namespace

nlohmann::json::parser_callback_t refuse_duplicate_keys(std::string what, nlohmann::json::parser_callback_t next) {
  // The keys seen so far in each object being read, the innermost last. Shared: the parser may
  // copy the callback.
  auto open = std::make_shared<std::vector<std::set<std::string>>>();
  return [open, what = std::move(what), next = std::move(next)](int depth, Event event, nlohmann::json& parsed) {
    if (event == Event::object_start) {
      open->emplace_back();
    } else if (event == Event::object_end) {
      if (!open->empty()) open->pop_back();
    } else if (event == Event::key && !open->empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open->back().insert(key).second)
        throw Error(ErrorKind::InvalidInput, fmt::format("{}the key {} is given twice in one object (which value is meant?)",
                                                         what.empty() ? "" : what + ": ", shown_key(key)));
    }
    return next ? next(depth, event, parsed) : true;
  };
}

std::optional<std::int64_t> whole_number(double value) {
  if (!std::isfinite(value) || std::trunc(value) != value || std::fabs(value) >= 9.0e15) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

std::string number_as_written(std::string_view text, std::string_view key, const nlohmann::json& value) {
  if (!value.is_number()) return value.dump();
  const std::string quoted = nlohmann::json(std::string(key)).dump();
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (std::size_t at = text.find(quoted); at != std::string_view::npos; at = text.find(quoted, at + 1)) {
    std::size_t i = at + quoted.size();
    while (i < text.size() && space(text[i])) ++i;
    if (i >= text.size() || text[i] != ':') continue;
    ++i;
    while (i < text.size() && space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && std::string_view("+-0123456789.eE").find(text[i]) != std::string_view::npos) ++i;
    const std::string token(text.substr(start, i - start));
    if (token.empty() || token.size() > 40) continue;
    char* end = nullptr;
    const double d = std::strtod(token.c_str(), &end);
    if (*end == '\0' && d == value.get<double>()) return token;
  }
  return value.dump();
}

nlohmann::json parse_user_json(std::string_view text, const std::string& what) {
  return nlohmann::json::parse(text, refuse_duplicate_keys(what));
}

nlohmann::json parse_user_json(std::istream& in, const std::string& what) {
  return nlohmann::json::parse(in, refuse_duplicate_keys(what));
}

}  // namespace mgpu::core
