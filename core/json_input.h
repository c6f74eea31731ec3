// JSON a user wrote: a --config, a shape suite, a campaign file, an export, a T4 file, a launch
// description. Contract: parse_user_json() parses as nlohmann::json::parse does (its
// parse_error for bad syntax) but throws Error{InvalidInput} "WHAT: the key "K" is given twice
// in one object" when an object repeats a key: nlohmann keeps the last value without a word, so
// the one the user meant may be dropped. refuse_duplicate_keys() is that check as a parser
// callback, for a parse that has a callback of its own (`next`, called after it).
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mgpu::core {

// `what` names the input in the message ("s.json"); empty, the message is the key alone (for a
// caller that names the input itself).
nlohmann::json::parser_callback_t refuse_duplicate_keys(std::string what,
                                                        nlohmann::json::parser_callback_t next = nullptr);
nlohmann::json parse_user_json(std::string_view text, const std::string& what);
nlohmann::json parse_user_json(std::istream& in, const std::string& what);

// What went wrong in a JSON text, for people: nlohmann's message without its exception id
// ("[json.exception.parse_error.101] "), and a number beyond a double's range (1e999) said as
// such (battery round 19, F29 and F42).
std::string json_error_text(const nlohmann::json::exception& e);

// The whole number a float stands for (64.0, 6.4e1 -> 64): finite, integral and below 9e15 (where
// every whole number is exact), as a stored or typed number is read by value; nullopt otherwise.
std::optional<std::int64_t> whole_number(double value);

// How the number `value` at JSON pointer `pointer` ("/tasks/1/seed") of `text` was written there
// ("1E2", "-0", a 60-digit integer), so a message quotes what the user typed; value.dump() when
// the pointer names no number of the text.
std::string number_as_written(std::string_view text, const std::string& pointer, const nlohmann::json& value);

}  // namespace mgpu::core
