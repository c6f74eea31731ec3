// The nightly suite without a GPU: mgpu-bench registers one benchmark per best config of a
// database (or a JSON export), refuses to report anything when there is no GPU (exit 3), and
// with the model writes Google Benchmark JSON and a recorded run; scripts/nightly.sh turns
// synthetic bench runs into the right verdicts, reports and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include "core/device_query.h"
#include "harness/current_templates.h"
#include "harness/nightly/suite.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_template.h"
#include "results/store.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string out;  // stdout and stderr
};

Ran run(const std::string& command) {
  Ran r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kBin = MGPU_BIN_DIR;
const std::string kNightly = std::string(MGPU_SOURCE_DIR) + "/scripts/nightly.sh";

bool has_gpu() { return !core::query_devices().gpus.empty(); }

class Nightly : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-nightly-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "r.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A tuning run that measured two problems with the current Hopper template.
  void tuned() {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "matmul", "test");
    for (int m : {1024, 2048}) add(s, run, m, 1.0, 0.01);
    s.end_run(run);
  }
  // A bench run of the same two configs, at `ms` with `noise`; measured on the GPU, or
  // predicted by the model, or every benchmark failed.
  enum class Held { Measured, Predicted, Failed };
  std::string bench(double ms, double noise, Held held = Held::Measured) {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("bench", "mgpu-bench", "test");
    for (int m : {1024, 2048}) add(s, run, m, ms, noise, held);
    s.end_run(run);
    return std::to_string(run);
  }
  void add(results::Store& s, std::int64_t run, int m, double ms, double noise, Held held = Held::Measured) {
    results::TrialRecord t;
    t.run_id = run;
    for (const results::TemplateId& id : current_templates())
      if (id.name == "matmul_sm90") t.tmpl = id;
    t.problem = {"matmul", fmt::format("m{}_n1024_k1024_bf16_bf16_kn", m), m, 1024, 1024, "bf16", "bf16", "kn"};
    t.config_json = kernels::sm90::MatmulConfig{}.to_tuning_config().to_json();
    t.env = {"NVIDIA H100 80GB HBM3", "sm_90a", "9.0", 132, "580", "13.0", 1980};
    t.median_ms = t.min_ms = t.mean_ms = ms;
    t.noise = noise;
    t.samples_ms = {ms, ms, ms};
    t.verification_error = 0.003;
    t.timer = "cupti";
    if (held == Held::Predicted) {
      t.source = "model";
      t.env.device_name = "model:H100 SXM";
      t.verification_error.reset();
    } else if (held == Held::Failed) {
      t.status = "wrong_result";
      t.median_ms = t.min_ms = t.mean_ms = std::nullopt;
      t.samples_ms.clear();
    }
    s.record_trial(t);
  }
  Ran nightly(const std::string& args) {
    return run(fmt::format("MGPU_BIN={} bash {} {} {} --out {}", kBin, kNightly, db_, args, (dir_ / "out").string()));
  }
  std::string report() { return slurp(dir_ / "out" / "report.md"); }

  fs::path dir_;
  std::string db_;
};

TEST_F(Nightly, TheSuiteIsTheDatabasesBestConfigsOneBenchmarkEach) {
  tuned();
  std::vector<SuiteEntry> suite = suite_from_database(db_, false);
  ASSERT_EQ(suite.size(), 2u);
  EXPECT_EQ(suite[0].name, "matmul_sm90/m1024_n1024_k1024_bf16_bf16_kn");
  EXPECT_EQ(suite[0].arch, "sm_90a");
  Ran list = run(fmt::format("{}/mgpu-bench --db {} --benchmark_list_tests", kBin, db_));
  EXPECT_EQ(list.code, 0) << list.out;
  EXPECT_NE(list.out.find("matmul_sm90/m1024_n1024_k1024_bf16_bf16_kn"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("matmul_sm90/m2048_n1024_k1024_bf16_bf16_kn"), std::string::npos) << list.out;
  // The same suite from a JSON export; a filter narrows it as Google Benchmark's filters do.
  ASSERT_EQ(run(fmt::format("{}/mgpu-tune export --db {} --format json -o {}", kBin, db_, (dir_ / "export").string())).code, 0);
  EXPECT_EQ(suite_from_export((dir_ / "export").string()).size(), 2u);
  Ran filtered = run(fmt::format("{}/mgpu-bench --configs {} --benchmark_list_tests --benchmark_filter=m2048", kBin,
                                 (dir_ / "export").string()));
  EXPECT_EQ(filtered.code, 0) << filtered.out;
  EXPECT_EQ(filtered.out.find("m1024"), std::string::npos) << filtered.out;
  EXPECT_NE(filtered.out.find("m2048"), std::string::npos) << filtered.out;
  // mgpu-tune run under the name mgpu-bench is the same program (how the device bundle ships it).
  fs::create_symlink(fs::path(kBin) / "mgpu-tune", dir_ / "mgpu-bench");
  Ran linked = run(fmt::format("{}/mgpu-bench --db {} --benchmark_list_tests", dir_.string(), db_));
  EXPECT_EQ(linked.code, 0) << linked.out;
  EXPECT_NE(linked.out.find("matmul_sm90/m1024_n1024_k1024_bf16_bf16_kn"), std::string::npos) << linked.out;
  Ran help = run(fmt::format("{}/mgpu-bench --help", kBin));
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--db"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--benchmark_filter"), std::string::npos) << help.out;
}

TEST_F(Nightly, WithoutAGpuNothingIsMeasuredAndNothingPasses) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  tuned();
  Ran r = run(fmt::format("{}/mgpu-bench --db {}", kBin, db_));
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("nothing was measured"), std::string::npos) << r.out;
  results::Store s = results::Store::open(db_, results::OpenMode::ReadOnly);
  EXPECT_EQ(s.runs().size(), 1u);  // no bench run recorded
  Ran n = nightly("");
  EXPECT_EQ(n.code, 3) << n.out;
  EXPECT_NE(report().find("NOT RUN"), std::string::npos) << report();
}

TEST_F(Nightly, TheModelWritesGoogleBenchmarkJsonAndARecordedRun) {
  tuned();
  std::string json = (dir_ / "gb.json").string();
  Ran r = run(fmt::format("{}/mgpu-bench --db {} --device model --benchmark_out={} --benchmark_out_format=json", kBin,
                          db_, json));
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json doc = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(doc.at("benchmarks").size(), 2u);
  for (const auto& b : doc["benchmarks"]) {
    EXPECT_NE(b.at("label").get<std::string>().find("predicted, not measured"), std::string::npos);
    EXPECT_GT(b.at("TFLOP/s").get<double>(), 0);
    EXPECT_GT(b.at("real_time").get<double>(), 0);
  }
  results::Store s = results::Store::open(db_, results::OpenMode::ReadOnly);
  ASSERT_EQ(s.runs().size(), 2u);
  EXPECT_EQ(s.runs().back().kind, "bench");
  int model_rows = 0;
  for (const results::TrialRow& t : s.trials())
    if (t.run_id == s.runs().back().id) model_rows += t.source == "model";
  EXPECT_EQ(model_rows, 2);
}

// Round 19, F30: a stop of nightly.sh (Ctrl-C, timeout's SIGTERM) is passed on to mgpu-bench,
// which says what it stopped; the script reports STOPPED, exits 128+N, and leaves nothing in
// TMPDIR. (A stand-in mgpu-bench that takes the signals as the real one does; the real
// mgpu-tune. env --default-signal: a background job of a script starts with SIGINT ignored.)
TEST_F(Nightly, AStopIsPassedOnToMgpuBenchAndNothingIsLeftInTmp) {
  tuned();
  const fs::path bin = dir_ / "bin", tmp = dir_ / "tmp";
  fs::create_directories(bin);
  fs::create_directories(tmp);
  fs::create_symlink(fs::path(kBin) / "mgpu-tune", bin / "mgpu-tune");
  std::ofstream(bin / "mgpu-bench") << R"(#!/usr/bin/python3
import signal, sys, time
def stop(sig, frame):
    print("mgpu-bench: stopped by " + signal.Signals(sig).name, file=sys.stderr, flush=True)
    sys.exit(128 + sig)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, stop)
print("mgpu-bench: measuring", file=sys.stderr, flush=True)
time.sleep(60)
print("mgpu-bench: ran to its end", file=sys.stderr, flush=True)
)";
  fs::permissions(bin / "mgpu-bench", fs::perms::owner_all);
  for (const auto& [sig, code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    const fs::path out = dir_ / (std::string("out-") + sig), err = dir_ / (std::string("err-") + sig);
    Ran r = run(fmt::format(
        "(TMPDIR={tmp} MGPU_BIN={bin} exec env --default-signal=INT bash {nightly} {db} --out {out} > /dev/null 2> {err}) & p=$!; "
        "for i in $(seq 100); do grep -q measuring {err} 2>/dev/null && break; sleep 0.1; done; kill -{sig} $p; wait $p; echo rc=$?",
        fmt::arg("tmp", tmp.string()), fmt::arg("bin", bin.string()), fmt::arg("nightly", kNightly), fmt::arg("db", db_),
        fmt::arg("out", out.string()), fmt::arg("err", err.string()), fmt::arg("sig", sig)));
    EXPECT_NE(r.out.find(fmt::format("rc={}", code)), std::string::npos) << sig << ": " << r.out << slurp(err);
    const std::string said = slurp(err);
    EXPECT_NE(said.find(std::string("mgpu-bench: stopped by SIG") + sig), std::string::npos) << said;
    EXPECT_EQ(said.find("ran to its end"), std::string::npos) << said;
    EXPECT_NE(slurp(out / "report.md").find("STOPPED"), std::string::npos);
    EXPECT_NE(slurp(out / "mgpu-bench.log").find("stopped by SIG"), std::string::npos);
    EXPECT_TRUE(fs::is_empty(tmp)) << "left in TMPDIR";
  }
}

TEST_F(Nightly, BadInputIsExitTwo) {
  EXPECT_EQ(run(fmt::format("{}/mgpu-bench", kBin)).code, 2);
  EXPECT_EQ(run(fmt::format("{}/mgpu-bench --configs {}/absent.json", kBin, dir_.string())).code, 2);
  EXPECT_EQ(run(fmt::format("{}/mgpu-bench --db {} --device abacus", kBin, db_)).code, 2);
  results::Store::open(db_, results::OpenMode::ReadWrite);  // an empty database: nothing to benchmark
  Ran empty = run(fmt::format("{}/mgpu-bench --db {}", kBin, db_));
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.out.find("nothing to benchmark"), std::string::npos) << empty.out;
  EXPECT_EQ(run(fmt::format("bash {} {}/absent.db", kNightly, dir_.string())).code, 2);
}

TEST_F(Nightly, VerdictsAndExitCodesOnSyntheticRuns) {
  tuned();
  std::string base = bench(1.0, 0.005);
  struct Case {
    double ms, noise;
    int code;
    const char *row, *verdict;
  };
  for (const Case& c : {Case{0.80, 0.005, 0, "FASTER", "PASS"}, Case{1.003, 0.005, 0, "SAME", "PASS"},
                        Case{1.25, 0.005, 1, "SLOWER", "REGRESSION"}, Case{1.0, 0.20, 4, "UNSTABLE", "NO VERDICT"}}) {
    std::string cand = bench(c.ms, c.noise);
    Ran r = nightly(fmt::format("{} --candidate {}", base, cand));
    EXPECT_EQ(r.code, c.code) << c.row << "\n" << r.out;
    EXPECT_NE(report().find(c.row), std::string::npos) << report();
    EXPECT_NE(report().find(c.verdict), std::string::npos) << report();
  }
  // Without a baseline argument the previous bench run is the baseline.
  std::string stable = bench(1.0, 0.005);
  std::string slower = bench(1.30, 0.005);
  Ran r = nightly(fmt::format("--candidate {}", slower));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(report().find(fmt::format("Baseline run {}, candidate run {}", stable, slower)), std::string::npos)
      << report();
  // A uuid prefix names the same run, even one of 8 digits (one uuid in 40 starts so: read as an
  // id, the run "was not in the database", in CI on 2026-11-28), as mgpu-tune reads it.
  std::string uuid = results::Store::open(db_, results::OpenMode::ReadOnly).run(slower).uuid.substr(0, 8);
  Ran by_uuid = nightly(fmt::format("--candidate {}", uuid));
  EXPECT_EQ(by_uuid.code, 1) << by_uuid.out;
  EXPECT_NE(report().find(fmt::format("Baseline run {}, candidate run {}", stable, uuid)), std::string::npos)
      << report();
  // Deterministically: a uuid starting with 8 digits, named by them.
  {
    results::Store store = results::Store::open(db_, results::OpenMode::ReadWrite);
    SQLite::Statement q(store.db(), "UPDATE runs SET uuid = '12345678' || substr(uuid, 9) WHERE id = CAST(?1 AS INTEGER)");
    q.bind(1, slower);
    ASSERT_EQ(q.exec(), 1);
  }
  Ran by_digits = nightly("--candidate 12345678");
  EXPECT_EQ(by_digits.code, 1) << by_digits.out;
  EXPECT_NE(report().find(fmt::format("Baseline run {}, candidate run 12345678", stable)), std::string::npos)
      << report();
}

TEST_F(Nightly, TheFirstBenchRunBecomesTheBaseline) {
  tuned();
  std::string first = bench(1.0, 0.005);
  Ran r = nightly(fmt::format("--candidate {}", first));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(report().find("becomes the baseline"), std::string::npos) << report();
}

TEST_F(Nightly, ARunThatMeasuredNothingIsNeverABaseline) {
  tuned();
  std::string measured = bench(1.0, 0.005);
  bench(0.5, 0.005, Held::Predicted);  // faster, but only predicted
  bench(1.0, 0.005, Held::Failed);
  std::string slower = bench(1.25, 0.005);
  Ran r = nightly(fmt::format("--candidate {}", slower));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(report().find(fmt::format("Baseline run {}, candidate run {}", measured, slower)), std::string::npos)
      << report();
  // Neither can be named as one.
  for (const char* run : {"3", "4"}) {
    Ran named = nightly(fmt::format("{} --candidate {}", run, slower));
    EXPECT_EQ(named.code, 2) << named.out;
    EXPECT_NE(named.out.find("measured nothing"), std::string::npos) << named.out;
  }
}

TEST_F(Nightly, PredictionsAreNoVerdictAndAFailedNightIsAFailure) {
  tuned();
  bench(1.0, 0.005);
  std::string predicted = bench(1.0, 0.005, Held::Predicted);
  Ran r = nightly(fmt::format("--candidate {}", predicted));
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(report().find("PREDICTIONS, NOT A VERDICT"), std::string::npos) << report();
  EXPECT_EQ(report().find("PASS"), std::string::npos) << report();
  std::string failed = bench(1.0, 0.005, Held::Failed);
  Ran f = nightly(fmt::format("--candidate {}", failed));
  EXPECT_EQ(f.code, 1) << f.out;
  EXPECT_NE(report().find("Every benchmark of run"), std::string::npos) << report();
}

TEST_F(Nightly, NoSuchRunIsBadInputAndNothingIsWritten) {
  tuned();
  bench(1.0, 0.005);
  for (const char* args : {"--candidate 999", "999", "--candidate ffffffff"}) {
    Ran r = nightly(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("is not in"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << args;
  }
}

TEST_F(Nightly, AFilterMatchingNothingRecordsNoRun) {
  tuned();
  Ran r = run(fmt::format("{}/mgpu-bench --db {} --device model --benchmark_filter=nomatch", kBin, db_));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("matches none"), std::string::npos) << r.out;
  EXPECT_EQ(results::Store::open(db_, results::OpenMode::ReadOnly).runs().size(), 1u);  // the tuning run alone
}

TEST_F(Nightly, ADatabaseOfPredictionsGetsAReportAndExitThree) {
  {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "matmul --device model", "test");
    add(s, run, 1024, 1.0, 0.01, Held::Predicted);
    s.end_run(run);
  }
  Ran r = nightly("");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(report().find("NOT RUN"), std::string::npos) << report();
  EXPECT_NE(report().find("only predicted"), std::string::npos) << report();
}

TEST_F(Nightly, TheReportDrawsEveryPictureForADatabaseWithRuns) {
  // A tuning run over varied configs (measured), a predicted run, then two bench runs.
  {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "matmul", "test");
    // A spread of about 44 configs the template builds at the problem (a measured row of one it
    // rejects is damage, which every reader refuses).
    const kernels::MatmulTemplate& tmpl = kernels::matmul_template(core::parse_arch("sm_90a"));
    std::vector<core::TuningConfig> valid;
    kernels::sm90::default_space().enumerate([&](const core::TuningConfig& c) {
      if (!tmpl.why_invalid(kernels::MatmulProblem{.m = 4096, .n = 4096, .k = 4096}, c)) valid.push_back(c);
    });
    ASSERT_GT(valid.size(), 44u);
    int i = 0;
    for (std::size_t at = 0; at < valid.size(); at += valid.size() / 44) {
      const core::TuningConfig& c = valid[at];
      ++i;
      results::TrialRecord t;
      t.run_id = run;
      for (const results::TemplateId& id : current_templates())
        if (id.name == "matmul_sm90") t.tmpl = id;
      t.problem = {"matmul", "m4096_n4096_k4096_bf16_bf16_kn", 4096, 4096, 4096, "bf16", "bf16", "kn"};
      t.config_json = c.to_json();
      t.env = {"NVIDIA H100 80GB HBM3", "sm_90a", "9.0", 132, "580", "13.0", 1980};
      double ms = 0.2 + 0.01 * c.get_int("max_concurrent_steps") + 0.001 * (i % 13);
      t.median_ms = t.min_ms = t.mean_ms = ms;
      t.noise = 0.01;
      t.samples_ms = {ms};
      t.verification_error = 0.003;
      s.record_trial(t);
      t.source = "model";
      t.env.device_name = "model:H100 SXM";
      t.verification_error.reset();
      s.record_trial(t);
    }
    s.end_run(run);
  }
  tuned();
  bench(1.0, 0.01);
  bench(1.1, 0.01);
  fs::path out = dir_ / "report";
  Ran r = run(fmt::format("{}/mgpu-tune report --db {} -o {}", kBin, db_, out.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("with 4 pictures"), std::string::npos) << r.out;
  for (const char* f : {"index.html", "convergence.png", "landscape.png", "importance.png", "history.png"}) {
    ASSERT_TRUE(fs::exists(out / f)) << f;
    EXPECT_GT(fs::file_size(out / f), 1000u) << f;
  }
  std::string page = slurp(out / "index.html");
  for (const char* img : {"convergence.png", "landscape.png", "importance.png", "history.png"})
    EXPECT_NE(page.find(fmt::format("<img src='{}'", img)), std::string::npos) << img;
  EXPECT_NE(page.find("predicted"), std::string::npos);  // the model rows are labelled
  EXPECT_NE(page.find("measured on a GPU"), std::string::npos);
}

TEST_F(Nightly, EachBenchmarkIsLabelledWithItsConfigsVerificationAndAFailedOneIsLeftOut) {
  {
    // Predictions of one config at two problem classes: the virtual device passed the kernel at
    // one and found a hazard at the other.
    results::Store s = results::Store::open(db_, results::OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "matmul --device model", "test");
    for (auto [m, cls, status] : {std::tuple{1024, "aligned", "ok"}, std::tuple{2048, "multi_tile", "hazard"}}) {
      results::TrialRecord t;
      t.run_id = run;
      for (const results::TemplateId& id : current_templates())
        if (id.name == "matmul_sm90") t.tmpl = id;
      t.problem = {"matmul", fmt::format("m{}_n1024_k1024_bf16_bf16_kn", m), m, 1024, 1024, "bf16", "bf16", "kn"};
      t.config_json = kernels::sm90::MatmulConfig{}.to_tuning_config().to_json();
      t.env = {"model:H100 SXM", "sm_90a", "9.0", 132, "", "", 1980};
      t.source = "model";
      t.median_ms = 0.1;
      t.kernel_hash = "0123456789abcdef";
      t.problem_class = cls;
      s.record_trial(t);
      t.source = "emulate";
      t.env.device_name = "virtual sm_90a";
      t.median_ms.reset();
      t.status = status;
      t.message = status == std::string("ok") ? "" : "hazard: a stage refilled while wgmma still reads it";
      s.record_trial(t);
    }
    s.end_run(run);
  }
  std::string json = (dir_ / "gb.json").string();
  Ran r = run(fmt::format("{}/mgpu-bench --db {} --include-model --device model --no-record --benchmark_out={} "
                          "--benchmark_out_format=json", kBin, db_, json));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("mgpu-bench: 1 rows skipped: failed verification on the virtual device"), std::string::npos)
      << r.out;
  nlohmann::json doc = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(doc.at("benchmarks").size(), 1u);
  EXPECT_EQ(doc["benchmarks"][0].at("name").get<std::string>().rfind("matmul_sm90/m1024_n1024_k1024_bf16_bf16_kn/", 0), 0u);
  EXPECT_NE(doc["benchmarks"][0].at("label").get<std::string>().find("config verification: virtual"), std::string::npos)
      << doc["benchmarks"][0];
  // Through an export: the entry's verification travels with it.
  ASSERT_EQ(run(fmt::format("{}/mgpu-tune export --db {} --format json --include-model -o {}", kBin, db_,
                            (dir_ / "export").string())).code, 0);
  std::vector<SuiteEntry> suite = suite_from_export((dir_ / "export").string());
  ASSERT_EQ(suite.size(), 1u);
  EXPECT_EQ(suite[0].verification, "virtual");
}

// Every op's best configs are the suite: an attention problem tuned beside the matmuls is one
// more benchmark, run by its own template, recorded as its own problem; through an export too,
// where an entry whose fields are not its key's, or whose config breaks the op's rules, is
// refused before anything runs.
TEST_F(Nightly, AnAttentionProblemIsABenchmarkBesideTheMatmuls) {
  tuned();
  Ran tune = run(fmt::format("MGPU_CACHE_DIR={}/cache {}/mgpu-tune attention --arch sm_90a --heads 2 --seq-q 256 "
                             "--head-dim 64 --device model --trials 1 --db {}", dir_.string(), kBin, db_));
  ASSERT_EQ(tune.code, 0) << tune.out;
  const std::string key = "b1_h2_kvh2_sq256_skv256_d64_bf16_noncausal";
  std::string json = (dir_ / "gb.json").string();
  Ran r = run(fmt::format("MGPU_CACHE_DIR={}/cache {}/mgpu-bench --db {} --include-model --device model "
                          "--benchmark_out={} --benchmark_out_format=json", dir_.string(), kBin, db_, json));
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json doc = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(doc.at("benchmarks").size(), 3u) << r.out;
  const nlohmann::json& a = doc["benchmarks"][0];
  EXPECT_EQ(a.at("name").get<std::string>().rfind("attention_sm90/" + key + "/", 0), 0u) << a;
  EXPECT_NE(a.at("label").get<std::string>().find("config verification: virtual"), std::string::npos) << a;
  EXPECT_GT(a.at("TFLOP/s").get<double>(), 0.0) << a;
  {
    results::Store s = results::Store::open(db_, results::OpenMode::ReadOnly);
    std::vector<results::RunRow> runs = s.runs();
    ASSERT_FALSE(runs.empty());
    ASSERT_EQ(runs.back().kind, "bench");
    int attention_rows = 0;
    for (const results::TrialRow& t : s.trials(runs.back().id))
      if (t.problem.kernel == "attention") {
        ++attention_rows;
        EXPECT_EQ(t.problem.key, key);
        EXPECT_EQ(t.tmpl.name, "attention_sm90");
        EXPECT_EQ(t.source, "model");
      }
    EXPECT_EQ(attention_rows, 1);
  }

  const fs::path exported = dir_ / "export";
  ASSERT_EQ(run(fmt::format("{}/mgpu-tune export --db {} --format json --include-model -o {}", kBin, db_,
                            exported.string())).code, 0);
  std::vector<SuiteEntry> suite = suite_from_export(exported.string());
  ASSERT_EQ(suite.size(), 3u);
  EXPECT_EQ(suite[0].name, "attention_sm90/" + key);
  EXPECT_EQ(suite[0].problem.kernel, "attention");
  EXPECT_GT(suite[0].problem.flop_count(), 0.0);

  // Hand edits of the attention entry: the fields no longer the key's, then a config the op refuses.
  fs::path file;
  for (const auto& f : fs::directory_iterator(exported))
    if (f.path().filename().string().find("attention") != std::string::npos) file = f.path();
  ASSERT_FALSE(file.empty());
  nlohmann::json edited = nlohmann::json::parse(slurp(file));
  edited["entries"][key]["problem"]["heads"] = 3;
  std::ofstream((dir_ / "fields.json").string()) << edited.dump();
  Ran fields = run(fmt::format("{}/mgpu-bench --configs {} --device model --no-record", kBin, (dir_ / "fields.json").string()));
  EXPECT_EQ(fields.code, 2) << fields.out;
  EXPECT_NE(fields.out.find("is not the one its key names"), std::string::npos) << fields.out;
  edited = nlohmann::json::parse(slurp(file));
  edited["entries"][key]["config"]["block_kv"] = 96;
  std::ofstream((dir_ / "config.json").string()) << edited.dump();
  Ran config = run(fmt::format("{}/mgpu-bench --configs {} --device model --no-record", kBin, (dir_ / "config.json").string()));
  EXPECT_EQ(config.code, 2) << config.out;
  EXPECT_NE(config.out.find("block_kv"), std::string::npos) << config.out;

  // A file whose template is not the op's for its arch is refused, not benchmarked under that
  // name (round 13, F11).
  edited = nlohmann::json::parse(slurp(file));
  edited["template"] = "matmul_sm100";
  std::ofstream((dir_ / "template.json").string()) << edited.dump();
  Ran named = run(fmt::format("{}/mgpu-bench --configs {} --device model --no-record", kBin, (dir_ / "template.json").string()));
  EXPECT_EQ(named.code, 2) << named.out;
  EXPECT_NE(named.out.find("the file's template 'matmul_sm100' is not the attention template of sm_90a (attention_sm90)"),
            std::string::npos) << named.out;

  // An export folder holding a predicted and a measured entry of one problem benchmarks the
  // measured one, whichever file's name sorts first (round 12, F4: the first file won).
  nlohmann::json measured = nlohmann::json::parse(slurp(file));
  measured["device"] = "NVIDIA H100 80GB HBM3";
  measured["entries"][key]["source"] = "cuda";
  nlohmann::json& schedule = measured["entries"][key]["config"]["consumer_schedule"];
  schedule = schedule == "serial" ? "intra_wg_overlap" : "serial";
  const std::string want = measured["entries"][key]["config"].dump();
  for (const auto& [predicted_name, measured_name] : {std::pair{"a.json", "b.json"}, std::pair{"b.json", "a.json"}}) {
    const fs::path two = dir_ / "two";
    fs::remove_all(two);
    fs::create_directories(two);
    fs::copy_file(file, two / predicted_name);
    std::ofstream((two / measured_name).string()) << measured.dump();
    const std::vector<SuiteEntry> picked = suite_from_export(two.string());
    ASSERT_EQ(picked.size(), 1u);
    EXPECT_TRUE(picked[0].measured) << measured_name;
    EXPECT_EQ(picked[0].config.to_json(), want) << measured_name;
  }
}

TEST_F(Nightly, TheReportRefusesBadInputWithoutWritingAnything) {
  fs::path out = dir_ / "report";
  Ran missing = run(fmt::format("{}/mgpu-tune report --db {}/absent.db -o {}", kBin, dir_.string(), out.string()));
  EXPECT_EQ(missing.code, 2) << missing.out;
  EXPECT_FALSE(fs::exists(out));
  Ran not_db = run(fmt::format("{}/mgpu-tune report --db {} -o {}", kBin, kNightly, out.string()));
  EXPECT_EQ(not_db.code, 2) << not_db.out;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace mgpu::harness
