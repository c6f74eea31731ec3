#include "harness/option_checks.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/numeric_options.h"

namespace mgpu::harness {
namespace {

// A command with one option of each kind check_every_option() meets.
struct Command {
  CLI::App app{"t"};
  int count = 7;
  std::uint64_t seed = 1;
  std::int64_t size = 4096;
  std::string path = "default", positional;
  double budget = 0;
  bool flag = false;
  Command() {
    auto* sub = app.add_subcommand("run");
    sub->add_option("--count", count);
    sub->add_option("--seed", seed);
    sub->add_option("--size", size)->check(whole_number(1, 2147483647));
    sub->add_option("--path", path);
    sub->add_option("--budget", budget);
    sub->add_option("input", positional);
    sub->add_flag("--flag", flag);
    check_every_option(app);
  }
  // The parse error's message, "" when it parsed.
  std::string parse(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  }
};

TEST(OptionChecks, AnIntegerIsReportedAsTyped) {
  EXPECT_EQ(Command().parse({"--count", ""}), "--count: must be a whole number between -9223372036854775808 and "
                                              "9223372036854775807, got ''");
  EXPECT_NE(Command().parse({"--count", "99999999999999999999"}).find("got '99999999999999999999'"), std::string::npos);
  EXPECT_EQ(Command().parse({"--seed", "-1"}), "--seed: must be a whole number at least 0 (at most 9223372036854775807), got '-1'");  // not 2^64-1
  EXPECT_EQ(Command().parse({"--size", "99999999999999999999"}),
            "--size: must be a whole number between 1 and 2147483647, got '99999999999999999999'");
  EXPECT_EQ(Command().parse({"--size", ""}), "--size: must be a whole number between 1 and 2147483647, got ''");
}

TEST(OptionChecks, ALeadingZeroIsDecimal) {
  Command c;
  EXPECT_EQ(c.parse({"--count", "010", "--size", "+08", "--seed", "0009"}), "");
  EXPECT_EQ(c.count, 10);
  EXPECT_EQ(c.size, 8);
  EXPECT_EQ(c.seed, 9u);
}

TEST(OptionChecks, AnEmptyValueIsRefusedByName) {
  EXPECT_EQ(Command().parse({"--path", ""}), "--path: an empty value ('') is not taken: give one, or leave the option out");
  EXPECT_EQ(Command().parse({"--budget", ""}), "--budget: an empty value ('') is not taken: give one, or leave the option out");
  EXPECT_EQ(Command().parse({""}), "input: an empty value ('') is not taken: give one");
  Command c;
  EXPECT_EQ(c.parse({"--path", "p", "--flag", "in"}), "");
  EXPECT_EQ(c.path, "p");
  EXPECT_TRUE(c.flag);
}

TEST(OptionChecks, HelpIsUnchangedByTheChecks) {
  Command c;
  const std::string help = c.app.get_subcommand("run")->help();
  EXPECT_NE(help.find("--count INT"), std::string::npos) << help;
  EXPECT_EQ(help.find("--count INT:"), std::string::npos) << help;
}

}  // namespace
}  // namespace mgpu::harness
