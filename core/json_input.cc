#include "core/json_input.h"

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

nlohmann::json parse_user_json(std::string_view text, const std::string& what) {
  return nlohmann::json::parse(text, refuse_duplicate_keys(what));
}

nlohmann::json parse_user_json(std::istream& in, const std::string& what) {
  return nlohmann::json::parse(in, refuse_duplicate_keys(what));
}

}  // namespace mgpu::core
