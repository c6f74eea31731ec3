#include "core/json_input.h"

#include <sstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/tuning_config.h"

namespace mgpu::core {
namespace {

std::string refusal(const std::string& text, const std::string& what) {
  try {
    parse_user_json(text, what);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    return e.what();
  }
  return "";
}

TEST(JsonInput, RefusesAKeyGivenTwiceInOneObject) {
  EXPECT_EQ(refusal(R"({"m": 1, "m": 2})", "s.json"), "s.json: the key \"m\" is given twice in one object (which value is meant?)");
  EXPECT_EQ(refusal(R"({"a": {"x": 1, "y": 2, "x": 1}})", ""), "the key \"x\" is given twice in one object (which value is meant?)");
  EXPECT_NE(refusal(R"([{"k": 1}, {"k": 2, "k": 3}])", "f"), "");
  EXPECT_NE(refusal(R"({"a": 1, "b": {"a": 2}, "a": 3})", "f"), "");  // the outer object's keys survive the inner one
}

TEST(JsonInput, TakesTheSameKeyInDifferentObjects) {
  nlohmann::json j = parse_user_json(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}], "k": 5})", "f");
  EXPECT_EQ(j["c"][1]["k"], 4);
  EXPECT_EQ(j["k"], 5);
  std::istringstream in(R"({"x": [], "y": {}})");
  EXPECT_TRUE(parse_user_json(in, "f").is_object());
}

TEST(JsonInput, LeavesSyntaxErrorsToTheParser) {
  EXPECT_THROW(parse_user_json("{\"a\": ", "f"), nlohmann::json::parse_error);
}

TEST(JsonInput, ShowsALongKeyShortened) {
  const std::string key(500, 'k');
  std::string message = refusal("{\"" + key + "\": 1, \"" + key + "\": 2}", "f");
  EXPECT_LT(message.size(), 200u) << message;
}

TEST(JsonInput, ChainsTheNextCallback) {
  int keys = 0;
  auto count = [&](int, nlohmann::json::parse_event_t e, nlohmann::json&) {
    keys += e == nlohmann::json::parse_event_t::key;
    return true;
  };
  nlohmann::json j = nlohmann::json::parse(R"({"a": 1, "b": {"c": 2}})", refuse_duplicate_keys("f", count));
  EXPECT_EQ(keys, 3);
  EXPECT_EQ(j["b"]["c"], 2);
}

TEST(JsonInput, AConfigWithAKeyTwiceIsRefused) {
  EXPECT_THROW(TuningConfig::from_json(R"({"tile_m": 64, "tile_m": 128})"), Error);
  EXPECT_EQ(TuningConfig::from_json(R"({"tile_m": 64, "tile_n": 128})").get_int("tile_n"), 128);
}

// A number is quoted from the place it was read (battery round 16, F4): the same key with the
// same value elsewhere, a 60-digit integer and -0 come back as that place writes them.
TEST(JsonInput, ANumberIsQuotedAsWrittenWhereItWasRead) {
  const std::string text =
      R"({"format": -0, "tasks": [{"seed": 100, "k": 1}, {"seed": 1E2, "a/b": 2.50, "s": "x\"y", "n": [1, 7e0]}],)"
      R"( "big": 123456789012345678901234567890123456789012345678901234567890})";
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(number_as_written(text, "/format", j["format"]), "-0");
  EXPECT_EQ(number_as_written(text, "/tasks/0/seed", j["tasks"][0]["seed"]), "100");
  EXPECT_EQ(number_as_written(text, "/tasks/1/seed", j["tasks"][1]["seed"]), "1E2");
  EXPECT_EQ(number_as_written(text, "/tasks/1/a~1b", j["tasks"][1]["a/b"]), "2.50");
  EXPECT_EQ(number_as_written(text, "/tasks/1/n/1", j["tasks"][1]["n"][1]), "7e0");
  EXPECT_EQ(number_as_written(text, "/big", j["big"]), "123456789012345678901234567890123456789012345678901234567890");
  EXPECT_EQ(number_as_written(text, "/tasks/1/none", nlohmann::json(5)), "5");  // no such number: its value
}

}  // namespace
}  // namespace mgpu::core
