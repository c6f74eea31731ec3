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
#include "harness/report/verification_summary.h"
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

// Round 4 (P03): regress between runs of predictions said SAME and exited 0, a pass. They are
// no verdict (exit 3, as nightly.sh reports predictions); measured comparisons beside them keep
// theirs, with a note.
TEST_F(ResultsCli, RegressOfPredictionsIsNoVerdict) {
  std::int64_t model_base = 0, model_cand = 0;
  {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    model_base = s.begin_run("tune", "model baseline", "0.1.0");
    model_cand = s.begin_run("tune", "model candidate", "0.1.0");
    for (auto [run, ms] : {std::pair{model_base, 1.0}, std::pair{model_cand, 1.0}, std::pair{base_, 2.0}}) {
      results::TrialRecord t;
      t.run_id = run;
      t.tmpl = current_templates().at(0);
      t.problem = {"matmul", "m4096_n4096_k4096_bf16_bf16_kn", 4096, 4096, 4096, "bf16", "bf16", "kn"};
      t.config_json = R"({"tile_m":64})";
      t.env = {"model:H100 SXM", "sm_90a", "9.0", 132, "", "", 1980};
      t.source = "model";
      t.median_ms = ms;
      t.noise = 0;
      s.record_trial(t);
    }
  }
  Ran r = run(fmt::format("regress --db {} --baseline {} --candidate {}", db_, model_base, model_cand));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no verdict: all 1 comparisons are of cost-model predictions (both runs predicted): nothing was "
                       "measured, and predictions are never a pass"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| SAME (PREDICTED) |"), std::string::npos) << r.out;
  Ran j = run(fmt::format("regress --db {} --baseline {} --candidate {} --json", db_, model_base, model_cand));
  EXPECT_EQ(j.exit_code, 3) << j.out;
  // The measured run against a copy of itself that also holds a prediction (base_ has one now):
  // the measured comparison passes, the predicted one is noted, not counted.
  Ran mixed = run(fmt::format("regress --db {} --baseline {} --candidate {}", db_, base_, base_));
  EXPECT_EQ(mixed.exit_code, 0) << mixed.out;
  EXPECT_NE(mixed.out.find("note: 1 of the 2 comparisons are of cost-model predictions (both runs predicted): no verdict "
                           "for them; the verdict is the 1 measured ones'"),
            std::string::npos)
      << mixed.out;
  // And a predicted slowdown beside a measured one is still the measured regression (exit 1).
  EXPECT_EQ(run(fmt::format("regress --db {} --baseline {} --candidate {}", db_, base_, cand_)).exit_code, 1);
}

TEST_F(ResultsCli, MergeAndBadDatabases) {
  std::string out = (dir_ / "m.db").string();
  Ran m = run(fmt::format("merge {} -o {}", db_, out));
  EXPECT_EQ(m.exit_code, 0) << m.out;
  EXPECT_NE(m.out.find("2 trials added"), std::string::npos) << m.out;
  // The same input twice is bad input (two connections to one file left its -wal/-shm).
  Ran twice = run(fmt::format("merge {} {} -o {}", db_, db_, (dir_ / "m2.db").string()));
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_NE(twice.out.find("is given twice"), std::string::npos) << twice.out;
  std::ofstream(dir_ / "junk.db") << "this is not sqlite, it is a text file of some length\n";
  std::string junk = (dir_ / "junk.db").string();
  auto before = fs::file_size(junk);
  EXPECT_EQ(run("best --db " + junk).exit_code, 2);
  EXPECT_EQ(run(fmt::format("merge {} -o {}", junk, out)).exit_code, 2);
  EXPECT_EQ(fs::file_size(junk), before);
}

// Verification (issue 17): predictions keyed like the virtual device's trials of them.
class ResultsCliVerification : public ResultsCli {
 protected:
  void predicted(const std::string& config, double ms, const std::string& kernel_hash) {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    results::TrialRecord t = row(config, kernel_hash);
    t.source = "model";
    t.env = {"model:H100 SXM", "sm_90a", "9.0", 132, "", "", 1980};
    t.median_ms = ms;
    s.record_trial(t);
  }
  void emulated(const std::string& config, const std::string& status, const std::string& kernel_hash,
                const std::string& device = "virtual sm_90a") {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    results::TrialRecord t = row(config, kernel_hash);
    t.source = "emulate";
    t.env = {device, "sm_90a", "9.0", 132, "", "", 0};
    t.status = status;
    t.message = status == "ok" ? "" : "hazard: stage 1 refilled by TMA while wgmma (PTX line 212) still reads it";
    s.record_trial(t);
  }
  results::TrialRecord row(const std::string& config, const std::string& kernel_hash) {
    results::TrialRecord t;
    t.run_id = base_;
    t.tmpl = current_templates().at(0);
    t.problem = {"matmul", "m4096_n4096_k4096_bf16_bf16_kn", 4096, 4096, 4096, "bf16", "bf16", "kn"};
    t.config_json = config;
    t.kernel_hash = kernel_hash;
    t.problem_class = "multi_tile";
    return t;
  }
  // stdout alone (the JSON document), stderr dropped.
  std::string stdout_of(const std::string& args) {
    FILE* p = popen(fmt::format("{} {} 2>/dev/null", MGPU_TUNE_EXE, args).c_str(), "r");
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    pclose(p);
    return out;
  }
};

TEST_F(ResultsCliVerification, BestAndExportShowEachRowsVerificationAndSkipFailedConfigs) {
  predicted(R"({"tile_m":64})", 0.1, "k64");  // the fastest prediction: the virtual device found a hazard
  emulated(R"({"tile_m":64})", "hazard", "k64");
  predicted(R"({"tile_m":128})", 0.2, "k256");
  emulated(R"({"tile_m":128})", "ok", "k256");

  Ran measured = run("best --db " + db_);
  EXPECT_EQ(measured.exit_code, 0) << measured.out;
  EXPECT_NE(measured.out.find("| source | verification |"), std::string::npos) << measured.out;
  EXPECT_NE(measured.out.find("| cuda | hardware |"), std::string::npos) << measured.out;

  Ran all = run("best --include-model --db " + db_);
  EXPECT_EQ(all.exit_code, 0) << all.out;
  EXPECT_NE(all.out.find("| model | virtual |"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find(R"(`{"tile_m":64}`)"), std::string::npos) << all.out;  // never ranked
  EXPECT_NE(all.out.find(R"(1 rows skipped: failed verification on the virtual device (1 configs: {"tile_m":64} at multi_tile: hazard))"),
            std::string::npos) << all.out;

  nlohmann::json j = nlohmann::json::parse(stdout_of("best --include-model --json --db " + db_));
  ASSERT_EQ(j.size(), 2u);
  for (const auto& r : j) EXPECT_EQ(r.at("verification"), r.at("source") == "cuda" ? "hardware" : "virtual") << r;

  std::string folder = (dir_ / "json").string();
  Ran exported = run(fmt::format("export --db {} --format json -o {} --include-model", db_, folder));
  EXPECT_EQ(exported.exit_code, 0) << exported.out;
  EXPECT_NE(exported.out.find("1 rows skipped: failed verification"), std::string::npos) << exported.out;
  nlohmann::json summary = nlohmann::json::parse(
      stdout_of(fmt::format("export --db {} --format json -o {} --include-model --json", db_, folder)));
  EXPECT_EQ(summary.at("skipped_failed_verification"), 1);
  int entries = 0;
  for (const auto& f : fs::directory_iterator(folder)) {
    std::ifstream in(f.path());
    nlohmann::json doc = nlohmann::json::parse(in);
    for (auto& [key, e] : doc.at("entries").items()) {
      ++entries;
      EXPECT_NE(e.at("config").at("tile_m"), 64) << e;
      EXPECT_EQ(e.at("verification"), e.at("source") == "cuda" ? "hardware" : "virtual") << e;
    }
  }
  EXPECT_EQ(entries, 2);
}

TEST_F(ResultsCliVerification, RequireVerifiedRefusesUnverifiedRowsAndWritesNothing) {
  predicted(R"({"tile_m":64})", 0.1, "k64");  // never run on the virtual device
  std::string header = (dir_ / "tuned.h").string(), folder = (dir_ / "json").string();
  std::ofstream(header) << "// yesterday's header\n";
  Ran refused = run(fmt::format("export --db {} --format cpp -o {} --include-model --require-verified", db_, header));
  EXPECT_EQ(refused.exit_code, 1) << refused.out;  // the work failed: the rows are not good enough
  EXPECT_NE(refused.out.find("mgpu-tune: error: --require-verified: 1 of 2 rows are not verified"), std::string::npos)
      << refused.out;
  // Named whole: the stored {"tile_m":64} means its other parameters at their defaults.
  EXPECT_NE(refused.out.find(R"("tile_m":64,"tile_n":128,"wg_dimension":"M"} (none))"), std::string::npos) << refused.out;
  std::ifstream in(header);
  std::string kept((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(kept, "// yesterday's header\n");
  EXPECT_EQ(run(fmt::format("export --db {} --format json -o {} --include-model --require-verified", db_, folder)).exit_code, 1);
  EXPECT_FALSE(fs::exists(folder));

  // Measured rows only: verified on the GPU, so accepted.
  Ran measured = run(fmt::format("export --db {} --format cpp -o {} --require-verified", db_, header));
  EXPECT_EQ(measured.exit_code, 0) << measured.out;
  // Once the virtual device passes the prediction's kernel, it is accepted too.
  emulated(R"({"tile_m":64})", "ok", "k64");
  Ran verified = run(fmt::format("export --db {} --format json -o {} --include-model --require-verified", db_, folder));
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_NE(verified.out.find("wrote 2 entries"), std::string::npos) << verified.out;

  Ran csv = run(fmt::format("export --db {} --format csv -o {}/t.csv --require-verified", db_, dir_.string()));
  EXPECT_EQ(csv.exit_code, 2) << csv.out;
  EXPECT_NE(csv.out.find("--require-verified goes with --format json, cpp or pack"), std::string::npos) << csv.out;
  EXPECT_FALSE(fs::exists(dir_ / "t.csv"));
}

TEST_F(ResultsCliVerification, TheReportCountsPassFailPerParameterValueAndListsEachFailure) {
  emulated(R"({"tile_m":64,"tile_n":128})", "ok", "a");
  // A second seeded schedule, recorded under the prediction's device: an ok trial without times
  // must not reach the pictures of measured times.
  emulated(R"({"tile_m":64,"tile_n":128})", "ok", "a", "model:H100 SXM");
  emulated(R"({"tile_m":128,"tile_n":128})", "hazard", "b");
  emulated(R"({"tile_m":128,"tile_n":128})", "env_error", "b");  // the machine failed: no verdict
  predicted(R"({"tile_m":64,"tile_n":128})", 0.1, "a");          // not a virtual-device trial
  {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadOnly);
    nlohmann::json v = verification_summary(s);
    EXPECT_EQ(v.at("passed"), 2);
    EXPECT_EQ(v.at("failed"), 1);
    EXPECT_EQ(v.at("inconclusive"), 1);
    ASSERT_EQ(v.at("templates").size(), 1u);
    const nlohmann::json& params = v["templates"][0].at("params");
    auto count = [&](const char* p, int value) {
      for (const auto& c : params.at(p))
        if (c.at("value") == value) return std::pair<int, int>(c.at("passed"), c.at("failed"));
      return std::pair<int, int>(-1, -1);
    };
    EXPECT_EQ(count("tile_m", 64), std::make_pair(2, 0));
    EXPECT_EQ(count("tile_m", 128), std::make_pair(0, 1));
    EXPECT_EQ(count("tile_n", 128), std::make_pair(2, 1));
    ASSERT_EQ(v.at("failures").size(), 1u);
    const nlohmann::json& f = v["failures"][0];
    EXPECT_EQ(f.at("status"), "hazard");
    EXPECT_EQ(f.at("config").at("tile_m"), 128);
    EXPECT_EQ(f.at("problem_class"), "multi_tile");
    EXPECT_NE(f.at("message").get<std::string>().find("still reads it"), std::string::npos);
  }
  // The page: the verification column of the best configs, the per-value table, the failure's report.
  fs::path out = dir_ / "report";
  Ran r = run(fmt::format("report --db {} -o {}", db_, out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out / "index.html");
  std::string page((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(page.find("<th>source</th><th>verification</th>"), std::string::npos);
  EXPECT_NE(page.find("<td>virtual</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>hardware</td>"), std::string::npos);
  EXPECT_NE(page.find("<h2>Verification on the virtual device</h2>"), std::string::npos);
  EXPECT_NE(page.find("4 virtual-device trials: 2 passed, 1 failed, 1 inconclusive"), std::string::npos);
  EXPECT_NE(page.find("<tr class='fail'><td>tile_m</td><td>128</td><td>0</td><td>1</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>tile_m</td><td>64</td><td>2</td><td>0</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("<td class='fail'>hazard</td><td><pre>hazard: stage 1 refilled by TMA while wgmma (PTX line 212) "
                      "still reads it</pre></td>"),
            std::string::npos);
  EXPECT_LT(page.find("tile_m</td><td>64<"), page.find("tile_m</td><td>128<"));  // numeric order
}

TEST_F(ResultsCliVerification, TheReportSaysWhenNothingRanOnTheVirtualDeviceAndWhatWasSkipped) {
  predicted(R"({"tile_m":64})", 0.1, "k64");
  emulated(R"({"tile_m":64})", "deadlock", "k64");
  fs::path out = dir_ / "report";
  Ran r = run(fmt::format("report --db {} -o {}", db_, out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(out / "index.html");
  std::string page((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(page.find("1 rows skipped: failed verification on the virtual device"), std::string::npos);
  EXPECT_EQ(page.find(R"(<code>{&quot;tile_m&quot;: 64}</code></td></tr>)"), std::string::npos);  // not a best config

  fs::remove_all(out);
  std::string bare = (dir_ / "bare.db").string();
  { results::Store::open(bare, results::OpenMode::ReadWrite); }
  ASSERT_EQ(run(fmt::format("report --db {} -o {}", bare, out.string())).exit_code, 0);
  std::ifstream in2(out / "index.html");
  std::string empty((std::istreambuf_iterator<char>(in2)), {});
  EXPECT_NE(empty.find("No config was run on the virtual device"), std::string::npos);
}

}  // namespace
}  // namespace mgpu::harness
