// The results commands end to end: best, export, merge and regress through the mgpu-tune
// executable, on databases written with the store; bad databases exit 2 untouched.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/current_templates.h"
#include "results/store.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int exit_code;
  std::string out;
};

Ran run(const std::string& args) {
  std::string cmd = fmt::format("{} {} 2>&1", MGPU_TUNE_EXE, args);
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

class ResultsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-results-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "r.db").string();
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    results::TemplateId current = current_templates().at(0);
    base_ = s.begin_run("tune", "baseline", "0.1.0");
    cand_ = s.begin_run("regress", "candidate", "0.1.0");
    for (auto [run, ms] : {std::pair{base_, 1.0}, std::pair{cand_, 1.25}}) {
      results::TrialRecord t;
      t.run_id = run;
      t.tmpl = current;
      t.problem = {"matmul", "m4096_n4096_k4096_bf16_bf16_kn", 4096, 4096, 4096, "bf16", "bf16", "kn"};
      t.config_json = R"({"tile_m":128})";
      t.env = {"NVIDIA H100 80GB HBM3", "sm_90a", "9.0", 132, "580", "13.0", 1980};
      t.median_ms = ms;
      t.noise = 0.002;
      t.verification_error = 0.004;
      s.record_trial(t);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_;
  std::int64_t base_ = 0, cand_ = 0;
};

TEST_F(ResultsCli, BestShowsTheWinnerWithItsThroughput) {
  Ran r = run("best --db " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("m4096_n4096_k4096_bf16_bf16_kn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("137.4"), std::string::npos) << r.out;  // 2*4096^3 / 1.0 ms
  Ran j = run("best --db " + db_ + " --json");
  EXPECT_EQ(nlohmann::json::parse(j.out).size(), 1u);
  Ran runs = run("best --db " + db_ + " --runs");
  EXPECT_NE(runs.out.find("baseline"), std::string::npos);
}

TEST_F(ResultsCli, ExportWritesEachFormat) {
  EXPECT_EQ(run(fmt::format("export --db {} --format json -o {}/json", db_, dir_.string())).exit_code, 0);
  EXPECT_EQ(run(fmt::format("export --db {} --format cpp -o {}/t.h", db_, dir_.string())).exit_code, 0);
  EXPECT_EQ(run(fmt::format("export --db {} --format csv -o {}/t.csv", db_, dir_.string())).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "t.h"));
  EXPECT_TRUE(fs::exists(dir_ / "t.csv"));
  EXPECT_EQ(run(fmt::format("export --db {} --format xml -o x", db_)).exit_code, 2);
}

TEST_F(ResultsCli, RegressExitsOneWhenSlower) {
  Ran r = run(fmt::format("regress --db {} --baseline {} --candidate {}", db_, base_, cand_));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("| SLOWER |"), std::string::npos) << r.out;
  Ran same = run(fmt::format("regress --db {} --baseline {} --candidate {}", db_, base_, base_));
  EXPECT_EQ(same.exit_code, 0) << same.out;
  Ran missing = run(fmt::format("regress --db {} --baseline {} --candidate 99", db_, base_));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("no run '99'"), std::string::npos);
}

TEST_F(ResultsCli, MergeAndBadDatabases) {
  std::string out = (dir_ / "m.db").string();
  Ran m = run(fmt::format("merge {} {} -o {}", db_, db_, out));
  EXPECT_EQ(m.exit_code, 0) << m.out;
  EXPECT_NE(m.out.find("2 trials added"), std::string::npos) << m.out;
  std::ofstream(dir_ / "junk.db") << "this is not sqlite, it is a text file of some length\n";
  std::string junk = (dir_ / "junk.db").string();
  auto before = fs::file_size(junk);
  EXPECT_EQ(run("best --db " + junk).exit_code, 2);
  EXPECT_EQ(run(fmt::format("merge {} -o {}", junk, out)).exit_code, 2);
  EXPECT_EQ(fs::file_size(junk), before);
}

}  // namespace
}  // namespace mgpu::harness
