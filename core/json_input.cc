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

namespace {

// RFC 6901: '~' and '/' in a key are escaped.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

}  // namespace

std::string number_as_written(std::string_view text, const std::string& pointer, const nlohmann::json& value) {
  // A walk over text that parsed as JSON: containers, keys and values, each number's path and
  // token noted until the one asked for is found. No number is read by value, so "-0", "1E2" and a
  // 60-digit integer come back as written.
  struct Frame {
    bool object = false;
    std::size_t index = 0;
    std::string key;
    bool expect_key = false;
  };
  std::vector<Frame> stack;
  auto path = [&] {
    std::string p;
    for (const Frame& f : stack) {
      p += '/';
      p += f.object ? pointer_token(f.key) : std::to_string(f.index);
    }
    return p;
  };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      stack.push_back({c == '{', 0, "", c == '{'});
      ++i;
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
      ++i;
    } else if (c == ',') {
      if (!stack.empty()) {
        if (stack.back().object) stack.back().expect_key = true;
        else ++stack.back().index;
      }
      ++i;
    } else if (c == '"') {
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      if (!stack.empty() && stack.back().object && stack.back().expect_key) {
        try {
          stack.back().key = nlohmann::json::parse(text.substr(i, j + 1 - i)).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          break;
        }
        stack.back().expect_key = false;
      }
      i = j + 1;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t j = i;
      while (j < text.size() && std::string_view("+-0123456789.eE").find(text[j]) != std::string_view::npos) ++j;
      if (path() == pointer) return std::string(text.substr(i, j - i));
      i = j;
    } else {
      ++i;  // white space, ':', true, false, null
    }
  }
  return value.dump();
}

nlohmann::json parse_user_json(std::string_view text, const std::string& what) {
  return nlohmann::json::parse(text, refuse_duplicate_keys(what));
}

nlohmann::json parse_user_json(std::istream& in, const std::string& what) {
  return nlohmann::json::parse(in, refuse_duplicate_keys(what));
}

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string why = e.what();
  if (const std::size_t at = why.find("] "); why.rfind("[json.exception", 0) == 0 && at != std::string::npos) why.erase(0, at + 2);
  if (dynamic_cast<const nlohmann::json::out_of_range*>(&e) && e.id == 406)  // "number overflow parsing '1e999'"
    why += " (a number beyond a double's range)";
  return why;
}

}  // namespace mgpu::core
