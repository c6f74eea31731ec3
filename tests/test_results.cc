// The results store: schema and migrations, round trips, best-config selection, stale rows,
// exports (the C++ header compiled and queried), merge, regress verdicts, bad inputs, two
// processes writing at once, and a writer killed with SIGKILL mid-run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "results/export.h"
#include "results/merge.h"
#include "results/regress.h"
#include "results/schema.h"
#include "results/store.h"

namespace mgpu::results {
namespace {

namespace fs = std::filesystem;

const TemplateId kTmpl{"matmul_sm90", "src1", "be1"};
const Environment kH100{"NVIDIA H100 80GB HBM3", "sm_90a", "9.0", 132, "580.159.04", "13.0", 1980};

ProblemRecord problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {"matmul", fmt::format("m{}_n{}_k{}_bf16_bf16_kn", m, n, k), m, n, k, "bf16", "bf16", "kn"};
}

std::string cfg(int tile_n) { return fmt::format(R"({{"tile_m":128,"tile_n":{}}})", tile_n); }

TrialRecord trial(std::int64_t run, const ProblemRecord& p, const std::string& config, double ms, double noise = 0.001,
                  const std::string& source = "cuda") {
  TrialRecord t;
  t.run_id = run;
  t.tmpl = kTmpl;
  t.problem = p;
  t.config_json = config;
  t.env = kH100;
  t.source = source;
  t.median_ms = t.min_ms = t.mean_ms = ms;
  t.noise = noise;
  t.samples_ms = {ms, ms};
  if (source == "cuda") t.verification_error = 0.003;
  return t;
}

class Results : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-results-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(Results, FreshDatabaseIsMigratedAndRoundTripsATrial) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  EXPECT_EQ(schema_version(s.db()), kSchemaVersion);
  std::int64_t run = s.begin_run("tune", "matmul --arch sm_90a", "0.1.0");
  TrialRecord t = trial(run, problem(4096, 4096, 4096), cfg(128), 0.25);
  t.registers = 154;
  t.message = "fine";
  t.timer = "cupti";
  t.kernel_hash = "1878e9774e011a73";
  t.problem_class = "aligned";
  s.record_trial(t);
  s.end_run(run);
  auto rows = s.trials();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].config_json, cfg(128));
  EXPECT_EQ(rows[0].median_ms, 0.25);
  EXPECT_EQ(rows[0].registers, 154);
  EXPECT_EQ(rows[0].timer, "cupti");
  EXPECT_EQ(rows[0].kernel_hash, "1878e9774e011a73");
  EXPECT_EQ(rows[0].problem_class, "aligned");
  EXPECT_EQ(rows[0].env.device_name, kH100.device_name);
  EXPECT_EQ(rows[0].samples_ms.size(), 2u);
  EXPECT_FALSE(rows[0].uuid.empty());
  EXPECT_FALSE(s.run(std::to_string(run)).ended_at.empty());
  EXPECT_TRUE(s.integrity_ok());
  // Reopening migrates nothing and keeps everything.
  Store again = Store::open(path("r.db"), OpenMode::ReadWrite);
  EXPECT_EQ(again.trials().size(), 1u);
}

// A run killed before its migration committed leaves a blank file: an empty one, or (killed
// after WAL mode rewrote the header) an SQLite file with no tables and no version.
TEST_F(Results, ABlankDatabaseHoldsNothingEarlierAndIsNamedBlankWhenRead) {
  EXPECT_FALSE(Store::open_earlier(path("missing.db")));
  EXPECT_FALSE(fs::exists(path("missing.db")));
  std::ofstream(path("empty.db")).close();
  {
    SQLite::Database wal(path("wal.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    wal.exec("PRAGMA journal_mode=WAL");
  }
  for (const char* name : {"empty.db", "wal.db"}) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(Store::open_earlier(path(name)));
    try {
      Store::open(path(name), OpenMode::ReadOnly);
      ADD_FAILURE() << "a blank database was read as results";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find("blank"), std::string::npos) << e.what();
    }
    // Opened for writing, it is simply a new database.
    Store s = Store::open(path(name), OpenMode::ReadWrite);
    s.record_trial(trial(s.begin_run("tune", "", "0"), problem(256, 256, 256), cfg(128), 0.1));
    ASSERT_TRUE(Store::open_earlier(path(name)));
    EXPECT_EQ(Store::open_earlier(path(name))->trials().size(), 1u);
  }
  // Something else's SQLite file is still refused, not taken for blank.
  {
    SQLite::Database other(path("other.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec("CREATE TABLE notes(x)");
  }
  EXPECT_THROW(Store::open_earlier(path("other.db")), core::Error);
}

// Battery r4 A23: a replay stored ok trials of 0 ms, and every reader then refused the whole
// database as damaged. The store never writes a time its readers refuse.
TEST_F(Results, ATimeReadersWouldRefuseIsNeverWritten) {
  Store s = Store::open(path("z.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0");
  s.record_trial(trial(run, problem(256, 256, 256), cfg(64), 0.5));
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    try {
      s.record_trial(trial(run, problem(256, 256, 256), cfg(128), bad, 0, "replay"));
      ADD_FAILURE() << "a median of " << bad << " was written";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find("a time must be a positive finite number"), std::string::npos) << e.what();
    }
  }
  std::vector<TrialRow> rows = s.trials();  // readable: no damaged row
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].median_ms, 0.5);
}

TEST_F(Results, AVerificationIsKeyedByKernelRunTimeParametersAndProblemClass) {
  Store s = Store::open(path("v.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("verify", "verify matmul", "0.1.0");
  auto emulated = [&](const std::string& config, const std::string& status, const std::string& hash,
                      const std::string& cls, const std::string& passed_message = "") {
    TrialRecord t = trial(run, problem(264, 264, 200), config, 0, 0, "emulate");
    t.median_ms = t.min_ms = t.mean_ms = t.noise = std::nullopt;
    t.samples_ms.clear();
    t.status = status;
    t.kernel_hash = hash;
    t.problem_class = cls;
    t.message = status == "ok" ? passed_message : "hazard: a stage released before the wgmma reading it retired";
    s.record_trial(t);
  };
  emulated(cfg(128), "ok", "aaaa", "ragged_m+ragged_n");
  emulated(cfg(128), "env_error", "aaaa", "multi_tile");  // the machine failed: no verdict
  emulated(cfg(64), "ok", "bbbb", "multi_tile");
  emulated(cfg(64), "hazard", "bbbb", "multi_tile");     // one bad schedule fails the key
  using State = Verification::State;
  EXPECT_EQ(s.verification({cfg(128), "aaaa", "ragged_m+ragged_n"}).state, State::Verified);
  EXPECT_EQ(s.verification({cfg(128), "aaaa", "multi_tile"}).state, State::None);
  EXPECT_EQ(s.verification({cfg(128), "cccc", "ragged_m+ragged_n"}).state, State::None);  // the kernel changed
  EXPECT_EQ(s.verification({cfg(64), "aaaa", "ragged_m+ragged_n"}).state, State::None);   // another config
  Verification bad = s.verification({cfg(64), "bbbb", "multi_tile"});
  EXPECT_EQ(bad.state, State::Failed);
  EXPECT_EQ(bad.passed, 1);
  EXPECT_EQ(bad.failed, 1);
  ASSERT_TRUE(bad.failure);
  EXPECT_EQ(bad.failure->status, "hazard");
  EXPECT_EQ(s.verification({cfg(64), "", "multi_tile"}).state, State::None);  // no kernel hash: unknown
  // How many schedules the strongest pass ran (battery r6 SE01: a pass under 1 was reused for
  // a request of 8): read from the verdict's message, 1 when it names none.
  EXPECT_EQ(s.verification({cfg(128), "aaaa", "ragged_m+ragged_n"}).schedules, 1);
  emulated(cfg(128), "ok", "aaaa", "ragged_m+ragged_n", "verified under 3 schedules");
  EXPECT_EQ(s.verification({cfg(128), "aaaa", "ragged_m+ragged_n"}).schedules, 3);
  EXPECT_EQ(verified_schedules("verified under 8 schedules; 3 stages"), 8);
  EXPECT_EQ(verified_schedules("verified under 2 schedules (by equivalence: kernel ab runs the same tiles)"), 2);
  EXPECT_EQ(verified_schedules("verified"), 1);
  EXPECT_EQ(verified_schedules("verified under many schedules"), 1);
  EXPECT_EQ(verified_schedules("verified under 99999999999999999999 schedules"), 1);  // not a number it can hold
  EXPECT_EQ(verified_schedules("verified under 4 seeds"), 1);

  TrialRow measured;
  measured.source = "cuda";
  measured.status = "ok";
  measured.verification_error = 0.001;
  EXPECT_EQ(verification_label(measured, {}), "hardware");
  EXPECT_EQ(verification_label(measured, bad), "failed");
  TrialRow predicted;
  predicted.source = "model";
  predicted.status = "ok";
  EXPECT_EQ(verification_label(predicted, s.verification({cfg(128), "aaaa", "ragged_m+ragged_n"})), "virtual");
  EXPECT_EQ(verification_label(predicted, bad), "failed");
  EXPECT_EQ(verification_label(predicted, {}), "none");
}

// A run named by digits: an id when short, else the start of a uuid (`best --runs` shows 8
// characters, and about one uuid in 40 starts with 8 digits); each falls back to the other.
TEST_F(Results, DigitsNameARunByIdOrByTheStartOfItsUuid) {
  Store s = Store::open(path("runs.db"), OpenMode::ReadWrite);
  for (int i = 0; i < 3; ++i) s.end_run(s.begin_run("tune", "matmul", "0.1.0"));
  s.db().exec("UPDATE runs SET uuid = '00000001-1c2d-4e5f-8a9b-0123456789ab' WHERE id = 2;"
              "UPDATE runs SET uuid = '07731415-1c2d-4e5f-8a9b-0123456789ab' WHERE id = 3");
  EXPECT_EQ(s.run("2").id, 2);
  EXPECT_EQ(s.run("00000001").id, 2);   // the short uuid, not run 1
  EXPECT_EQ(s.run("077").id, 3);        // no run 77: the uuid it starts
  EXPECT_EQ(s.run("07731415-1c2d").id, 3);
  EXPECT_EQ(s.run("1").id, 1);
  EXPECT_THROW(s.run("99999999999999999999999"), core::Error);
}

// Schema 8: a problem of another op keeps its fields and flops (TFLOP/s is counted from them),
// and a trial verified at several classes (joined by ';') is verified only when every class
// is, failed when any failed -- a matmul class's own '+' is one class.
TEST_F(Results, AnOpsProblemKeepsItsFieldsAndIsVerifiedAtEveryClass) {
  Store s = Store::open(path("op.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "attention", "0.1.0");
  ProblemRecord attention{"attention", "b1_h8_kvh8_sq1024_skv1024_d128_bf16_noncausal", 0, 0, 0, "bf16", "bf16", ""};
  attention.fields = R"({"batch":1,"heads":8,"head_dim":128,"causal":false})";
  attention.flops = 4.0 * 128 * 8 * 1024 * 1024;
  TrialRecord t = trial(run, attention, cfg(128), 0.02, 0, "model");
  t.kernel_hash = "hhhh";
  t.problem_class = "ragged;gqa";
  s.record_trial(t);
  auto rows = s.trials();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].problem.kernel, "attention");
  EXPECT_EQ(rows[0].problem.fields, attention.fields);
  ASSERT_TRUE(rows[0].problem.flops);
  EXPECT_DOUBLE_EQ(*rows[0].problem.flops, *attention.flops);
  EXPECT_NEAR(tflops(rows[0]), *attention.flops / 0.02e-3 / 1e12, 1e-9);
  // A matmul row written without fields keeps "{}" and 2 m n k.
  s.record_trial(trial(run, problem(256, 256, 256), cfg(64), 0.01));
  const TrialRow mm = s.trials().back();
  EXPECT_EQ(mm.problem.fields, "{}");
  EXPECT_FALSE(mm.problem.flops);
  EXPECT_DOUBLE_EQ(mm.problem.flop_count(), 2.0 * 256 * 256 * 256);

  auto verdict = [&](const std::string& cls, const std::string& status) {
    TrialRecord v = trial(run, attention, cfg(128), 0, 0, "emulate");
    v.median_ms = v.min_ms = v.mean_ms = v.noise = std::nullopt;
    v.status = status;
    v.kernel_hash = "hhhh";
    v.problem_class = cls;
    s.record_trial(v);
  };
  using State = Verification::State;
  EXPECT_EQ(verification_classes("ragged;gqa"), (std::vector<std::string>{"ragged", "gqa"}));
  EXPECT_EQ(verification_classes("ragged_m+ragged_n"), (std::vector<std::string>{"ragged_m+ragged_n"}));
  verdict("ragged", "ok");
  EXPECT_EQ(s.verification({cfg(128), "hhhh", "ragged;gqa"}).state, State::None);  // gqa not verified yet
  EXPECT_EQ(s.best(true).size(), 2u);
  verdict("gqa", "ok");
  EXPECT_EQ(s.verification({cfg(128), "hhhh", "ragged;gqa"}).state, State::Verified);
  verdict("gqa", "hazard");
  Verification failed = s.verification({cfg(128), "hhhh", "ragged;gqa"});
  EXPECT_EQ(failed.state, State::Failed);
  ASSERT_TRUE(failed.failure);
  EXPECT_EQ(failed.failure->status, "hazard");
  // A row failed at one of its classes never ranks.
  std::vector<TrialRow> skipped;
  std::vector<TrialRow> best = s.best(true, {}, &skipped);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].problem.kernel, "matmul");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].problem.kernel, "attention");
  // Rows written behind the tool's back are refused, not misread.
  for (const char* damage : {"UPDATE problems SET fields = '[1]' WHERE kernel = 'attention'",
                             "UPDATE problems SET fields = '{}', flops = -1 WHERE kernel = 'attention'",
                             "UPDATE problems SET flops = 'many' WHERE kernel = 'attention'"}) {
    s.db().exec(damage);
    try {
      s.trials();
      ADD_FAILURE() << "read after " << damage;
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find("is damaged"), std::string::npos) << e.what();
    }
  }
}

TEST_F(Results, AVersionOneDatabaseIsMigratedKeepingItsTrials) {
  {
    Store s = Store::open(path("v1.db"), OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "matmul", "0.1.0");
    s.record_trial(trial(run, problem(512, 512, 512), cfg(64), 0.5));
    // Back to version 1's shape: no timer column, no verification key, no kernel evidence.
    s.db().exec("DROP TABLE kernel_evidence; DROP INDEX trials_by_kernel; ALTER TABLE trials DROP COLUMN problem_class; "
                "ALTER TABLE trials DROP COLUMN kernel_hash; ALTER TABLE trials DROP COLUMN timer; "
                "ALTER TABLE problems DROP COLUMN fields; ALTER TABLE problems DROP COLUMN flops; PRAGMA user_version = 1");
  }
  {
    // Read-only, a version-1 database is read as it is and left at version 1.
    Store old = Store::open(path("v1.db"), OpenMode::ReadOnly);
    ASSERT_EQ(old.trials().size(), 1u);
    EXPECT_EQ(old.trials()[0].timer, "");
    EXPECT_EQ(schema_version(old.db()), 1);
  }
  Store s = Store::open(path("v1.db"), OpenMode::ReadWrite);
  EXPECT_EQ(schema_version(s.db()), kSchemaVersion);
  auto rows = s.trials();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].median_ms, 0.5);
  EXPECT_EQ(rows[0].timer, "");  // how an old trial was timed is unknown
  EXPECT_TRUE(s.integrity_ok());
  // Schema 5 rebuilt the runs table under the trials: every trial still names its run.
  EXPECT_EQ(s.db().execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt(), 0);
  EXPECT_EQ(s.db().execAndGet("PRAGMA foreign_keys").getInt(), 1);
  EXPECT_EQ(s.run(std::to_string(rows[0].run_id)).kind, "tune");
  EXPECT_GT(s.begin_run("verify", "verify matmul --all", "0.1.0"), rows[0].run_id);
}

TEST_F(Results, BestIsTheFastestVerifiedMeasuredOkTrialPerProblem) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  auto p1 = problem(4096, 4096, 4096), p2 = problem(8192, 8192, 8192);
  s.record_trial(trial(run, p1, cfg(64), 0.30));
  s.record_trial(trial(run, p1, cfg(128), 0.20));
  s.record_trial(trial(run, p1, cfg(192), 0.10, 0.001, "model"));  // predicted: not a result
  TrialRecord unverified = trial(run, p1, cfg(256), 0.05);
  unverified.verification_error.reset();
  s.record_trial(unverified);
  TrialRecord failed = trial(run, p1, cfg(32), 0.01);
  failed.status = "wrong_result";
  s.record_trial(failed);
  s.record_trial(trial(run, p2, cfg(128), 1.6));
  auto best = s.best(false);
  ASSERT_EQ(best.size(), 2u);
  for (const TrialRow& b : best) {
    if (b.problem.key == p1.key) EXPECT_EQ(b.config_json, cfg(128));
    else EXPECT_EQ(b.config_json, cfg(128));
  }
  auto with_model = s.best(true);
  EXPECT_EQ(with_model.size(), 3u);  // the model's own winner appears, labelled
  EXPECT_EQ(s.measured_configs(kTmpl, p1.key, kH100, "cuda").size(), 4u);
  EXPECT_EQ(s.history("matmul_sm90", p1.key, cfg(128)).size(), 1u);
}

TEST_F(Results, ChangedTemplateHashMakesRowsStaleNotWrong) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  auto p = problem(4096, 4096, 4096);
  s.record_trial(trial(run, p, cfg(64), 0.1));  // old template version
  TrialRecord newer = trial(run, p, cfg(128), 0.2);
  newer.tmpl.source_hash = "src2";
  s.record_trial(newer);
  TemplateId current{"matmul_sm90", "src2", "be1"};
  auto best = s.best(false, {current});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_json, cfg(128));  // the faster stale row is not used as current
  EXPECT_EQ(s.trials().size(), 2u);          // ... but it stays
  EXPECT_TRUE(s.measured_configs(current, p.key, kH100, "cuda").count(cfg(128)));
  EXPECT_FALSE(s.measured_configs(current, p.key, kH100, "cuda").count(cfg(64)));
}

TEST_F(Results, SuiteCoverageSaysHowEachShapeIsServedAsTheLookupDoes) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  s.record_trial(trial(run, problem(1024, 4096, 4096), R"({"tile_n":64,"wg_dimension":"M"})", 0.1));
  s.record_trial(trial(run, problem(8192, 4096, 4096), R"({"tile_n":256,"wg_dimension":"M"})", 0.5));
  ProblemRecord f16 = problem(2048, 4096, 4096);
  f16.dtype = f16.out_dtype = "f16";
  f16.key = "m2048_n4096_k4096_f16_f16_kn";
  // Between the tuned shapes: 2048 is nearer 1024 (ratio 2) than 8192 (4); 6000 nearer 8192.
  SuiteShapes suite{"mine", {problem(1024, 4096, 4096), problem(2048, 4096, 4096), problem(6000, 4096, 4096), f16}};
  std::vector<Coverage> c = coverage(suite, s.best(false));
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].how, "exact");
  EXPECT_EQ(c[1].how, "nearest");
  EXPECT_EQ(c[1].entry, "m1024_n4096_k4096_bf16_bf16_kn");
  EXPECT_DOUBLE_EQ(c[1].size_ratio, 2.0);
  EXPECT_EQ(c[2].entry, "m8192_n4096_k4096_bf16_bf16_kn");
  EXPECT_EQ(c[3].how, "none");  // no f16 problem tuned: nullptr, never a bf16 config (round 19, F27)
  EXPECT_EQ(c[3].entry, "");
  // The generated header's lookup agrees, and the header lists the coverage.
  EXPECT_EQ(export_cpp(s, path("tuned.h"), false, {}, suite), 2);
  std::string header = slurp(path("tuned.h"));
  EXPECT_NE(header.find("// Coverage of suite mine (4 shapes) on sm_90a:"), std::string::npos) << header;
  EXPECT_NE(header.find("nearest: m1024_n4096_k4096_bf16_bf16_kn (size ratio 2.00)"), std::string::npos) << header;
  std::ofstream(path("use.cc")) << R"(#include "tuned.h"
using namespace mgpu_tuned;
static_assert(lookup_matmul_sm90("sm_90a", {2048, 4096, 4096, "bf16", "bf16", "kn"})->tile_n == 64);
static_assert(lookup_matmul_sm90("sm_90a", {6000, 4096, 4096, "bf16", "bf16", "kn"})->tile_n == 256);
static_assert(lookup_matmul_sm90("sm_90a", {3000, 4096, 4096, "bf16", "bf16", "kn"})->tile_n == 256);  // 2.93 vs 2.73
int main() {}
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Werror -c use.cc -o use.o 2> err.txt", dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt"));
  EXPECT_EQ(export_json(s, path("json"), false, {}, suite), 2);
  nlohmann::json doc = nlohmann::json::parse(slurp(path("json") + "/nvidia_h100_80gb_hbm3__matmul_sm90.json"));
  EXPECT_EQ(doc["coverage"]["suite"], "mine");
  EXPECT_EQ(doc["coverage"]["shapes"]["m6000_n4096_k4096_bf16_bf16_kn"]["how"], "nearest");
}

// Issue 32: a shape the tuner never saw gets the schedule of its nearest tuned shape. Tuned:
// decode M = 16 (swap_ab with split-K) and prefill M = 4096 (unswapped, data-parallel) at the
// same N and K. The ratio distance is decided by M here: M = 1 and 128 are nearer 16 (16x and
// 8x) than 4096, M = 512 and 2048 nearer 4096 (8x and 2x against 32x and 128x); the crossover
// is the geometric mean, 256. A split count picked for another K is safe: the launcher holds
// it to the shape's k-steps and workspace (kernels/matmul_sm90/config.h, effective_split_k).
TEST_F(Results, TheNearestShapeLookupPicksTheDecodeScheduleForSmallMAndThePrefillOneForLarge) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  const std::string decode = R"({"schedule":"split_k","split_k":4,"swap_ab":"yes","tile_m":16,"tile_n":64})";
  const std::string prefill = R"({"schedule":"data_parallel","split_k":1,"swap_ab":"no","tile_m":128,"tile_n":128})";
  s.record_trial(trial(run, problem(16, 4096, 14336), decode, 0.05));
  s.record_trial(trial(run, problem(4096, 4096, 14336), prefill, 1.2));
  SuiteShapes suite{"llama", {problem(1, 4096, 14336), problem(128, 4096, 14336), problem(512, 4096, 14336),
                              problem(2048, 4096, 14336)}};
  std::vector<Coverage> c = coverage(suite, s.best(false));
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].entry, "m16_n4096_k14336_bf16_bf16_kn");
  EXPECT_EQ(c[1].entry, "m16_n4096_k14336_bf16_bf16_kn");
  EXPECT_EQ(c[2].entry, "m4096_n4096_k14336_bf16_bf16_kn");
  EXPECT_EQ(c[3].entry, "m4096_n4096_k14336_bf16_bf16_kn");
  for (const Coverage& x : c) EXPECT_EQ(x.how, "nearest") << x.shape;
  // The generated header's lookup and the JSON export agree.
  EXPECT_EQ(export_cpp(s, path("tuned.h"), false, {}, suite), 2);
  std::ofstream(path("use.cc")) << R"(#include "tuned.h"
using namespace mgpu_tuned;
constexpr Shape at(std::int64_t m) { return {m, 4096, 14336, "bf16", "bf16", "kn"}; }
static_assert(lookup_matmul_sm90("sm_90a", at(1))->schedule == "split_k");
static_assert(lookup_matmul_sm90("sm_90a", at(1))->swap_ab == "yes");
static_assert(lookup_matmul_sm90("sm_90a", at(128))->schedule == "split_k");
static_assert(lookup_matmul_sm90("sm_90a", at(255))->swap_ab == "yes");
static_assert(lookup_matmul_sm90("sm_90a", at(257))->swap_ab == "no");
static_assert(lookup_matmul_sm90("sm_90a", at(512))->schedule == "data_parallel");
static_assert(lookup_matmul_sm90("sm_90a", at(2048))->tile_m == 128);
int main() {}
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Werror -c use.cc -o use.o 2> err.txt", dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt"));
  EXPECT_EQ(export_json(s, path("json"), false, {}, suite), 2);
  nlohmann::json doc = nlohmann::json::parse(slurp(path("json") + "/nvidia_h100_80gb_hbm3__matmul_sm90.json"));
  EXPECT_EQ(doc["coverage"]["shapes"]["m1_n4096_k14336_bf16_bf16_kn"]["entry"], "m16_n4096_k14336_bf16_bf16_kn");
  EXPECT_EQ(doc["coverage"]["shapes"]["m512_n4096_k14336_bf16_bf16_kn"]["entry"], "m4096_n4096_k14336_bf16_bf16_kn");
}

TEST_F(Results, ExportsJsonCsvAndACompilableCppHeader) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  s.record_trial(trial(run, problem(4096, 4096, 4096), R"({"tile_n":128,"wg_dimension":"M"})", 0.2));
  s.record_trial(trial(run, problem(512, 512, 512), R"({"tile_n":64,"wg_dimension":"N"})", 0.01));
  s.record_trial(trial(run, problem(512, 512, 512), R"({"tile_n":256,"wg_dimension":"N"})", 0.001, 0.0, "model"));

  EXPECT_EQ(export_json(s, path("json"), false), 2);
  std::string file = path("json") + "/nvidia_h100_80gb_hbm3__matmul_sm90.json";
  ASSERT_TRUE(fs::exists(file));
  nlohmann::json doc = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(doc["entries"]["m4096_n4096_k4096_bf16_bf16_kn"]["config"]["tile_n"], 128);
  EXPECT_EQ(doc["entries"].size(), 2u);

  EXPECT_EQ(export_csv(s, path("t.csv"), /*include_model=*/true), 3);  // every trial, the model's too
  std::string csv = slurp(path("t.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_EQ(export_csv(s, path("t.csv"), /*include_model=*/false), 2);  // measured only (replaced whole)
  csv = slurp(path("t.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_EQ(csv.find(",model,"), std::string::npos);

  EXPECT_EQ(export_cpp(s, path("tuned.h"), false), 2);
  std::ofstream(path("use.cc")) << R"(#include "tuned.h"
#include <cstdio>
using namespace mgpu_tuned;
static_assert(lookup_matmul_sm90("sm_90a", {4096, 4096, 4096, "bf16", "bf16", "kn"})->tile_n == 128);
static_assert(lookup_matmul_sm90("sm_90a", {600, 500, 512, "bf16", "bf16", "kn"})->tile_n == 64);  // nearest
static_assert(lookup_matmul_sm90("sm_90a", {4000, 4100, 4096, "bf16", "bf16", "kn"})->wg_dimension == "M");
static_assert(lookup_matmul_sm90("sm_100a", {4096, 4096, 4096, "bf16", "bf16", "kn"}) == nullptr);
static_assert(lookup_matmul_sm90("sm_90a", {4096, 4096, 4096, "f16", "f16", "kn"}) == nullptr);  // no f16 tuned
static_assert(lookup_matmul_sm90("sm_90a", {4096, 4096, 4096, "bf16", "f32", "kn"}) == nullptr);  // nor f32 output
static_assert(lookup_matmul_sm90("sm_90a", {4096, 4096, 4096, "bf16", "bf16", "nk"}) == nullptr);  // nor B as N x K
int main() { std::printf("%d\n", lookup_matmul_sm90("sm_90a", {1, 2, 3, "f16", "f16", "nk"}) == nullptr); }
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Werror use.cc -o use 2> err.txt && ./use > out.txt",
                                dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt"));
  EXPECT_EQ(slurp(path("out.txt")), "1\n");  // no same-dtype entry: nullptr (round 19, F27), not the first one
}

// Another op's rows get their own problem struct, in the op's field order, beside the matmul's
// Shape: its lookup matches the text fields, the switches and the kernel-shaping numbers
// exactly (a config tuned at one head dim may not build at another: nullptr, not table[0]),
// and takes the nearest of the sizes. A row whose problem lacks the op's fields is damaged.
TEST_F(Results, ExportsAnotherOpsProblemsAsItsOwnStructBesideTheMatmuls) {
  Store s = Store::open(path("op.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  s.record_trial(trial(run, problem(512, 512, 512), R"({"tile_n":64,"wg_dimension":"N"})", 0.01));
  auto attention = [&](std::int64_t seq, std::int64_t d, bool causal, int block_kv, double ms) {
    ProblemRecord p{"attention", fmt::format("b1_h8_kvh8_sq{0}_skv{0}_d{1}_bf16_{2}", seq, d, causal ? "causal" : "noncausal"),
                    0, 0, 0, "bf16", "bf16", ""};
    p.fields = fmt::format(R"({{"batch":1,"heads":8,"seq_q":{0},"seq_kv":{0},"head_dim":{1},"dtype":"bf16","causal":{2}}})",
                           seq, d, causal);
    p.flops = 4.0 * d * 8 * seq * seq;
    TrialRecord t = trial(run, p, fmt::format(R"({{"block_kv":{},"max_concurrent_steps":2}})", block_kv), ms);
    t.tmpl.name = "attention_sm90";
    return t;
  };
  s.record_trial(attention(1024, 128, false, 128, 0.1));
  s.record_trial(attention(8192, 128, false, 64, 1.0));
  s.record_trial(attention(1024, 64, true, 64, 0.05));
  ProblemRecord sample{"attention", "", 0, 0, 0, "bf16", "bf16", ""};
  sample.fields = R"({"batch":1,"heads":1,"seq_q":128,"seq_kv":128,"head_dim":64,"dtype":"bf16","causal":false})";
  const std::vector<DeclaredTemplate> declared = {
      {"matmul_sm90", R"({"tile_n":64,"wg_dimension":"N"})", ProblemRecord{}, {}},
      {"attention_sm90", R"({"block_kv":64,"max_concurrent_steps":1})", sample, {"head_dim"}}};
  EXPECT_EQ(export_cpp(s, path("ops.h"), false, {}, {}, declared), 4);
  const std::string header = slurp(path("ops.h"));
  EXPECT_NE(header.find("struct Problem_attention {\n  std::int64_t batch;\n  std::int64_t heads;\n  std::int64_t seq_q;"),
            std::string::npos) << header;
  std::ofstream(path("use_ops.cc")) << R"(#include "ops.h"
using namespace mgpu_tuned;
constexpr Problem_attention at(std::int64_t seq, std::int64_t d, bool causal) { return {1, 8, seq, seq, d, "bf16", causal}; }
static_assert(lookup_attention_sm90("sm_90a", at(1024, 128, false))->block_kv == 128);      // exact
static_assert(lookup_attention_sm90("sm_90a", at(6000, 128, false))->block_kv == 64);       // nearest seq
static_assert(lookup_attention_sm90("sm_90a", at(4096, 64, true))->block_kv == 64);         // the causal d64 one
static_assert(lookup_attention_sm90("sm_90a", at(1024, 256, false)) == nullptr);            // no d256 kernel tuned
static_assert(lookup_attention_sm90("sm_90a", {1, 8, 1024, 1024, 128, "f16", false}) == nullptr);  // nor f16
static_assert(lookup_attention_sm90("sm_100a", at(1024, 128, false)) == nullptr);
static_assert(lookup_matmul_sm90("sm_90a", {600, 500, 512, "bf16", "bf16", "kn"})->tile_n == 64);
int main() {}
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Wextra -Werror use_ops.cc -o use_ops 2> err.txt", dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt")) << header;

  // A suite of attention problems is covered as that lookup serves it: the head dim matched
  // exactly, the sequence by its size ratio, and no tuned kernel of a head dim is "none" (nullptr),
  // never the first entry.
  auto suite_problem = [&](std::int64_t seq, std::int64_t d) { return attention(seq, d, false, 64, 1).problem; };
  SuiteShapes suite{"attn", {suite_problem(1024, 128), suite_problem(6000, 128), suite_problem(1024, 256)}, "", {"head_dim"}};
  std::vector<TrialRow> rows;
  for (TrialRow& r : s.best(false))
    if (r.problem.kernel == "attention") rows.push_back(r);
  const std::vector<Coverage> c = coverage(suite, rows);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].how, "exact");
  EXPECT_EQ(c[1].how, "nearest");
  EXPECT_EQ(c[1].entry, "b1_h8_kvh8_sq8192_skv8192_d128_bf16_noncausal");
  EXPECT_EQ(c[2].how, "none");  // the d64 row is a size ratio of 4 away, but another kernel
  EXPECT_EQ(c[2].entry, "");
  EXPECT_EQ(export_cpp(s, path("ops_cov.h"), false, {}, suite, declared), 4);
  EXPECT_NE(slurp(path("ops_cov.h")).find("none: nullptr (no tuned problem of its text and kernel fields)"), std::string::npos);

  // A row whose problem is not its op's: refused by name, nothing written.
  TrialRecord damaged = attention(2048, 128, false, 64, 0.2);
  damaged.problem.fields = R"({"batch":1,"heads":8})";
  s.record_trial(damaged);
  try {
    export_cpp(s, path("damaged.h"), false, {}, {}, declared);
    ADD_FAILURE() << "a damaged problem was exported";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("its attention problem has batch (int), heads (int) where"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path("damaged.h")));
}

TEST_F(Results, MergeCombinesDatabasesWithoutDuplicates) {
  {
    Store a = Store::open(path("a.db"), OpenMode::ReadWrite);
    std::int64_t r = a.begin_run("tune", "machine a", "0.1.0");
    a.record_trial(trial(r, problem(4096, 4096, 4096), cfg(64), 0.3));
    a.record_trial(trial(r, problem(4096, 4096, 4096), cfg(128), 0.2));
    Store b = Store::open(path("b.db"), OpenMode::ReadWrite);
    std::int64_t rb = b.begin_run("tune", "machine b", "0.1.0");
    b.record_trial(trial(rb, problem(8192, 8192, 8192), cfg(128), 1.7));
  }
  std::string a_before = slurp(path("a.db"));
  EXPECT_EQ(merge_databases({path("a.db"), path("b.db")}, path("out.db")), 3);
  EXPECT_EQ(merge_databases({path("b.db"), path("a.db")}, path("out.db")), 0);  // idempotent
  // One input given twice is bad input (two connections to one file left its -wal/-shm).
  EXPECT_THROW(merge_databases({path("a.db"), path("b.db"), path("a.db")}, path("out.db")), core::Error);
  Store out = Store::open(path("out.db"), OpenMode::ReadOnly);
  EXPECT_EQ(out.trials().size(), 3u);
  EXPECT_EQ(out.runs().size(), 2u);
  EXPECT_EQ(out.best(false).size(), 2u);
  EXPECT_EQ(slurp(path("a.db")), a_before);  // inputs untouched
}

// A campaign's shard whose task was killed before it wrote its schema is blank: the merge of
// the other shards goes on and names it; a missing input still stops the merge untouched.
TEST_F(Results, MergeSkipsABlankInputAndNamesIt) {
  {
    Store a = Store::open(path("a.db"), OpenMode::ReadWrite);
    a.record_trial(trial(a.begin_run("tune", "", "0"), problem(4096, 4096, 4096), cfg(64), 0.3));
  }
  std::ofstream(path("blank.db")).close();
  std::vector<std::string> blank;
  EXPECT_EQ(merge_databases({path("blank.db"), path("a.db")}, path("out.db"), &blank), 1);
  EXPECT_EQ(blank, std::vector<std::string>{path("blank.db")});
  EXPECT_EQ(fs::file_size(path("blank.db")), 0u);  // inputs untouched
  EXPECT_THROW(merge_databases({path("a.db"), path("missing.db")}, path("out2.db")), core::Error);
  EXPECT_FALSE(fs::exists(path("out2.db")));
}

TEST_F(Results, RegressVerdictsFollowTheNoise) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t base = s.begin_run("tune", "", "0.1.0"), cand = s.begin_run("regress", "", "0.1.0");
  auto p = problem(4096, 4096, 4096);
  auto both = [&](int tile_n, double b_ms, double b_noise, double c_ms, double c_noise) {
    s.record_trial(trial(base, p, cfg(tile_n), b_ms, b_noise));
    s.record_trial(trial(cand, p, cfg(tile_n), c_ms, c_noise));
  };
  both(32, 1.00, 0.002, 1.010, 0.002);  // +1%: inside the 2% threshold -> SAME
  both(64, 1.00, 0.002, 1.100, 0.002);  // +10% -> SLOWER
  both(128, 0.90, 0.002, 0.800, 0.002);  // -11% -> FASTER; and the winner changes to it
  both(192, 1.00, 0.040, 1.070, 0.040);  // +7% but 8% combined noise -> SAME
  both(256, 1.00, 0.200, 1.500, 0.010);  // baseline too noisy -> UNSTABLE
  s.record_trial(trial(base, p, cfg(16), 0.85));  // the baseline's winner, absent from the candidate
  RegressReport r = compare_runs(s, base, cand);
  ASSERT_EQ(r.rows.size(), 5u);
  std::map<std::string, Verdict> v;
  for (const Comparison& c : r.rows) v[c.config_json] = c.verdict;
  EXPECT_EQ(v[cfg(32)], Verdict::Same);
  EXPECT_EQ(v[cfg(64)], Verdict::Slower);
  EXPECT_EQ(v[cfg(128)], Verdict::Faster);
  EXPECT_EQ(v[cfg(192)], Verdict::Same);
  EXPECT_EQ(v[cfg(256)], Verdict::Unstable);
  EXPECT_EQ(r.slower, 1);
  ASSERT_EQ(r.winner_changes.size(), 1u);
  EXPECT_EQ(r.winner_changes[0].base_config, cfg(16));
  EXPECT_EQ(r.winner_changes[0].candidate_config, cfg(128));
  EXPECT_NE(to_markdown(r).find("| SLOWER |"), std::string::npos);
}

// Round 4 (P03): a comparison of predictions keeps its verdict, labelled, but is no
// measurement: the counts are of measured comparisons, so a predicted slowdown is no regression
// and a predicted SAME no pass.
TEST_F(Results, RegressCountsMeasuredComparisonsOnly) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t base = s.begin_run("tune", "", "0.1.0"), cand = s.begin_run("regress", "", "0.1.0");
  auto p = problem(4096, 4096, 4096);
  s.record_trial(trial(base, p, cfg(32), 1.0));  // measured on both sides: SAME
  s.record_trial(trial(cand, p, cfg(32), 1.0));
  s.record_trial(trial(base, p, cfg(64), 1.0, 0.001, "model"));  // predicted on both: "SLOWER"
  s.record_trial(trial(cand, p, cfg(64), 2.0, 0.001, "model"));
  s.record_trial(trial(base, p, cfg(128), 1.0, 0.001, "model"));  // predicted on one side only
  s.record_trial(trial(cand, p, cfg(128), 1.0));
  RegressReport r = compare_runs(s, base, cand);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.slower, 0);
  EXPECT_EQ(r.same, 1);
  EXPECT_EQ(r.predicted, 2);
  EXPECT_EQ(r.both_predicted, 1);
  EXPECT_EQ(r.measured(), 1);
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("**0 slower, 0 faster, 1 same, 0 unstable** (measured comparisons)"), std::string::npos) << md;
  EXPECT_NE(md.find("NO VERDICT for 2 of 3 comparisons: they are of cost-model predictions (source model), not "
                    "measurements -- 1 with both runs predicted, 1 with one."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| SLOWER (PREDICTED) |"), std::string::npos) << md;
  // Predictions alone: nothing measured, and the markdown says the runs get no verdict.
  RegressReport only = compare_runs(s, base, base);
  EXPECT_EQ(only.measured(), 1);  // cfg(32) against itself
  std::int64_t model = s.begin_run("tune", "", "0.1.0");
  s.record_trial(trial(model, p, cfg(64), 1.5, 0.001, "model"));
  RegressReport predictions = compare_runs(s, base, model);
  EXPECT_EQ(predictions.measured(), 0);
  EXPECT_NE(to_markdown(predictions).find("with nothing else to compare, the runs get no verdict"), std::string::npos);
}

TEST_F(Results, BadInputsAreRefusedAndLeaveFilesUntouched) {
  std::ofstream(path("notes.txt")) << "not a database at all, just some text that is long enough\n";
  std::string before = slurp(path("notes.txt"));
  EXPECT_THROW(Store::open(path("notes.txt"), OpenMode::ReadWrite), core::Error);
  EXPECT_EQ(slurp(path("notes.txt")), before);

  {  // a database from a newer schema
    SQLite::Database db(path("future.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE x(a); PRAGMA user_version = 99");
  }
  std::string future = slurp(path("future.db"));
  try {
    Store::open(path("future.db"), OpenMode::ReadWrite);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(path("future.db")), future);
  EXPECT_FALSE(fs::exists(path("future.db-wal")));

  EXPECT_THROW(Store::open(path("nope.db"), OpenMode::ReadOnly), core::Error);
  EXPECT_THROW(Store::open("/proc/mgpu-cannot-be-here/r.db", OpenMode::ReadWrite), core::Error);

  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  // Run ids are also uuid prefixes of other runs now and then: an exact id must still win.
  for (int i = 0; i < 40; ++i) s.begin_run("tune", "", "0.1.0");
  for (int i = 1; i <= 40; ++i) EXPECT_EQ(s.run(std::to_string(i)).id, i);
  // An id no run has, and no run's uuid starts with (uuids are random: "42" is the start of
  // one of 40 about one time in seven, and then names that run).
  int missing = 41;
  auto a_uuid_starts_with = [&](const std::string& prefix) {
    for (const RunRow& r : s.runs())
      if (r.uuid.rfind(prefix, 0) == 0) return true;
    return false;
  };
  while (a_uuid_starts_with(std::to_string(missing))) ++missing;
  try {
    s.run(std::to_string(missing));
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find(fmt::format("no run '{}'", missing)), std::string::npos);
  }
}

// A run is its id or the start of its uuid, compared as text: LIKE made '%' and '_' wildcards
// that matched any run, anywhere in its uuid.
TEST_F(Results, RunUuidPrefixesAreLiteralAndFromTheStart) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  const std::int64_t a = s.begin_run("tune", "", "0.1.0"), b = s.begin_run("tune", "", "0.1.0");
  s.db().exec("UPDATE runs SET uuid = '0a1b2c3d-0000-4000-8000-000000000001' WHERE id = " + std::to_string(a));
  s.db().exec("UPDATE runs SET uuid = '0a1b9999-0000-4000-8000-000000000002' WHERE id = " + std::to_string(b));
  for (const char* bad : {"%", "_", "*", "0a1%", "0a1b_c", "%2c3d", "2c3d", "0000-000000000001", "0a1b2c3d-0000-4000-8000-0000000000012"}) {
    try {
      s.run(bad);
      ADD_FAILURE() << "run '" << bad << "' matched";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find(fmt::format("no run '{}'", bad)), std::string::npos) << e.what();
    }
  }
  try {
    s.run("0a1b");
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous: 2 runs match"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.run(""), core::Error);
  // The twins: prefixes from the start, in either case, and whole uuids.
  EXPECT_EQ(s.run("0a1b2").id, a);
  EXPECT_EQ(s.run("0A1B2C").id, a);
  EXPECT_EQ(s.run("0a1b9").id, b);
  EXPECT_EQ(s.run("0a1b9999-0000-4000-8000-000000000002").id, b);
  EXPECT_EQ(s.run(std::to_string(b)).id, b);
  // A uuid holding '%' or '_' (imported from elsewhere) is matched by those characters as text.
  s.db().exec("UPDATE runs SET uuid = 'x%_y' WHERE id = " + std::to_string(b));
  EXPECT_EQ(s.run("x%_").id, b);
  EXPECT_THROW(s.run("xa"), core::Error);
}

TEST_F(Results, TwoProcessesWritingAtOnceLoseNothing) {
  { Store::open(path("r.db"), OpenMode::ReadWrite); }  // create and migrate once
  constexpr int kPerWriter = 150;
  auto writer = [&](int which) {
    Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", fmt::format("writer {}", which), "0.1.0");
    for (int i = 0; i < kPerWriter; ++i) s.record_trial(trial(run, problem(64 * (which + 1), 64, 64), cfg(i), 0.1 + i));
  };
  pid_t child = fork();
  if (child == 0) {
    try {
      writer(1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "writer 1 failed: %s\n", e.what());
      _exit(1);
    }
    _exit(0);
  }
  writer(0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  Store s = Store::open(path("r.db"), OpenMode::ReadOnly);
  EXPECT_EQ(s.trials().size(), 2u * kPerWriter);
  EXPECT_TRUE(s.integrity_ok());
}

TEST_F(Results, AWriterKilledMidRunKeepsEveryCommittedTrial) {
  { Store::open(path("r.db"), OpenMode::ReadWrite); }
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t child = fork();
  if (child == 0) {
    close(pipefd[0]);
    Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "doomed", "0.1.0");
    for (int i = 0;; ++i) {
      s.record_trial(trial(run, problem(128, 128, 128), cfg(i), 1.0 + i));
      if (write(pipefd[1], &i, sizeof i) != sizeof i) _exit(2);  // i is committed
    }
  }
  close(pipefd[1]);
  int last = -1, got = 0;
  while (last < 40 && read(pipefd[0], &got, sizeof got) == sizeof got) last = got;
  kill(child, SIGKILL);
  while (read(pipefd[0], &got, sizeof got) == sizeof got) last = got;  // drain what it managed
  waitpid(child, nullptr, 0);
  close(pipefd[0]);
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);  // recovers the WAL
  EXPECT_TRUE(s.integrity_ok());
  auto rows = s.trials();
  EXPECT_GE(static_cast<int>(rows.size()), last + 1);
  for (int i = 0; i <= last; ++i) EXPECT_EQ(rows[i].config_json, cfg(i));
}

TEST_F(Results, ACppExportWithNothingTunedStillDeclaresEveryLookup) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  s.record_trial(trial(run, problem(512, 512, 512), cfg(64), 0.01, 0.0, "model"));  // predicted only
  EXPECT_EQ(export_cpp(s, path("tuned.h"), false, {}, {}, {{"matmul_sm90", cfg(128)}, {"matmul_sm100", cfg(64)}}), 0);
  std::ofstream(path("use.cc")) << R"(#include "tuned.h"
#include <cstdio>
using namespace mgpu_tuned;
static_assert(lookup_matmul_sm90("sm_90a", {4096, 4096, 4096, "bf16", "bf16", "kn"}) == nullptr);
int main() {
  const Config_matmul_sm100* c = lookup_matmul_sm100("sm_100a", {1, 2, 3, "f16", "f16", "nk"});
  std::printf("%s\n", c ? "found" : "not found");
}
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Wextra -Werror use.cc -o use 2> err.txt && ./use > out.txt",
                                dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt")) << slurp(path("tuned.h"));
  EXPECT_EQ(slurp(path("out.txt")), "not found\n");
}

TEST_F(Results, ManyProcessesCreatingOneNewDatabaseAllSucceed) {
  // They start together on a path that does not exist yet: schema creation must be one
  // exclusive transaction ("table environments already exists" before).
  constexpr int kProcs = 16;
  int gate[2];
  ASSERT_EQ(pipe(gate), 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      close(gate[1]);
      char c;
      if (read(gate[0], &c, 1) != 0) _exit(3);  // EOF: every process released at once
      try {
        Store s = Store::open(path("new.db"), OpenMode::ReadWrite);
        std::int64_t run = s.begin_run("tune", fmt::format("proc {}", i), "0.1.0");
        s.record_trial(trial(run, problem(64, 64, 64), cfg(i), 1.0));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "process %d failed: %s\n", i, e.what());
        _exit(1);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  Store s = Store::open(path("new.db"), OpenMode::ReadOnly);
  EXPECT_EQ(schema_version(s.db()), kSchemaVersion);
  EXPECT_EQ(s.runs().size(), static_cast<size_t>(kProcs));
  EXPECT_EQ(s.trials().size(), static_cast<size_t>(kProcs));
  EXPECT_TRUE(s.integrity_ok());
}

TEST_F(Results, ReadingLeavesNoWalOrShmBehindAndTheFileUnchanged) {
  {
    Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
    s.record_trial(trial(s.begin_run("tune", "", "0.1.0"), problem(64, 64, 64), cfg(8), 1.0));
  }
  ASSERT_FALSE(fs::exists(path("r.db-wal")));  // the last writer closed: checkpointed
  std::string before = slurp(path("r.db"));
  {
    Store s = Store::open(path("r.db"), OpenMode::ReadOnly);
    EXPECT_EQ(s.trials().size(), 1u);
    EXPECT_EQ(s.best(false).size(), 1u);
  }
  EXPECT_FALSE(fs::exists(path("r.db-wal")));
  EXPECT_FALSE(fs::exists(path("r.db-shm")));
  EXPECT_EQ(slurp(path("r.db")), before);
  // With a writer open, the reader sees its committed rows and leaves its files alone.
  Store w = Store::open(path("r.db"), OpenMode::ReadWrite);
  w.record_trial(trial(w.begin_run("tune", "", "0.1.0"), problem(64, 64, 64), cfg(16), 1.0));
  {
    Store r = Store::open(path("r.db"), OpenMode::ReadOnly);
    EXPECT_EQ(r.trials().size(), 2u);
  }
  EXPECT_TRUE(fs::exists(path("r.db-wal")));
  w.record_trial(trial(w.begin_run("tune", "", "0.1.0"), problem(64, 64, 64), cfg(32), 1.0));  // still works
  EXPECT_EQ(w.trials().size(), 3u);
}

TEST_F(Results, InMemoryAndUriPathsAreRefusedForEveryMode) {
  for (const char* bad : {"", ":memory:", "file::memory:", "file:x.db?mode=memory", "FILE:x.db"})
    for (OpenMode mode : {OpenMode::ReadOnly, OpenMode::ReadWrite}) {
      try {
        Store::open(bad, mode);
        ADD_FAILURE() << "opened '" << bad << "'";
      } catch (const core::Error& e) {
        EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput) << bad;
      }
    }
  // A name that merely contains URI characters is a plain file.
  Store s = Store::open(path("a?b#c%d.db"), OpenMode::ReadWrite);
  EXPECT_TRUE(fs::exists(path("a?b#c%d.db")));
}


// A time or a size written behind the tool's back ranked first (-1 ms, "inf TFLOP/s") and was
// exported; every reader now refuses the database, naming the row.
TEST_F(Results, DamagedTimesAndSizesAreRefusedWhereRowsAreRead) {
  auto message = [&](const std::string& damage) {
    fs::remove(path("d.db"));
    Store s = Store::open(path("d.db"), OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "", "0.1.0");
    s.record_trial(trial(run, problem(512, 512, 512), cfg(64), 0.01));
    s.db().exec(damage);
    try {
      s.best(true);
      return std::string("not refused");
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      return std::string(e.what());
    }
  };
  auto has = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  std::string m = message("UPDATE trials SET median_ms = -1, min_ms = -1, mean_ms = -1 WHERE id = 1");
  EXPECT_TRUE(has(m, "d.db is damaged: trial 1 has median_ms -1 (a time must be a positive finite number)")) << m;
  EXPECT_TRUE(has(message("UPDATE trials SET median_ms = 'abc'"), "has median_ms 'abc'"));
  EXPECT_TRUE(has(message("UPDATE trials SET median_ms = 'nan'"), "has median_ms 'nan'"));
  EXPECT_TRUE(has(message("UPDATE trials SET median_ms = 0"), "has median_ms 0 "));
  EXPECT_TRUE(has(message("UPDATE trials SET min_ms = 1e999"), "has min_ms inf"));
  EXPECT_TRUE(has(message("UPDATE trials SET mean_ms = -0.5"), "has mean_ms -0.5"));
  EXPECT_EQ(message("UPDATE trials SET min_ms = 0, mean_ms = 0"), "not refused");  // what a replay records for none
  EXPECT_TRUE(has(message("UPDATE problems SET m = 9223372036854775807, n = -5, k = 0"),
                  "trial 1 has a problem with m = 9223372036854775807"));
  EXPECT_TRUE(has(message("UPDATE problems SET k = 0"), "has a problem of 512x512x0"));
  EXPECT_EQ(message("UPDATE problems SET m = 0, n = 0, k = 0"), "not refused");  // an imported landscape's
}

// Database text went into the header as it was: a quote in a config value, an arch or a dtype
// ended the string literal and the rest became code.
TEST_F(Results, TheCppHeaderEscapesEveryStringAndRefusesWhatItCannotHold) {
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  ProblemRecord p = problem(512, 512, 512);
  TrialRecord t = trial(run, p, R"({"tile_m":128,"wg_dimension":"M\"; } int evil() { return 1; } //\\?\n"})", 0.01);
  t.env.arch = "sm_90a\"";
  s.record_trial(t);
  EXPECT_EQ(export_cpp(s, path("tuned.h"), false), 1);
  std::ofstream(path("use.cc")) << R"(#include "tuned.h"
#include <cstdio>
using namespace mgpu_tuned;
int main() {
  const Config_matmul_sm90* c = lookup_matmul_sm90("sm_90a\"", {512, 512, 512, "bf16", "bf16", "kn"});
  if (c) std::printf("1 %.*s|\n", int(c->wg_dimension.size()), c->wg_dimension.data());
}
)";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Werror use.cc -o use 2> err.txt && ./use > out.txt",
                                dir_.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt")) << slurp(path("tuned.h"));
  EXPECT_EQ(slurp(path("out.txt")), "1 M\"; } int evil() { return 1; } //\\?\n|\n");
  // A dtype no matmul has (a quote in it, once a way out of the literal) is a damaged row.
  {
    fs::remove(path("d.db"));
    Store d = Store::open(path("d.db"), OpenMode::ReadWrite);
    ProblemRecord bad = problem(512, 512, 512);
    bad.dtype = "f64\"";
    bad.key = "m512_n512_k512_f64\"_bf16_kn";
    d.record_trial(trial(d.begin_run("tune", "", "0.1.0"), bad, cfg(64), 0.01));
    EXPECT_THROW(export_cpp(d, path("d.h"), false), core::Error);
    EXPECT_FALSE(fs::exists(path("d.h")));
  }

  for (const char* value : {"null", "{}", "1.5", "18446744073709551615"}) {
    fs::remove(path("v.db"));
    Store v = Store::open(path("v.db"), OpenMode::ReadWrite);
    std::int64_t r = v.begin_run("tune", "", "0.1.0");
    v.record_trial(trial(r, problem(512, 512, 512), fmt::format(R"({{"tile_m":128,"tile_n":{}}})", value), 0.01));
    try {
      export_cpp(v, path("v.h"), false);
      ADD_FAILURE() << value << " was exported";
    } catch (const core::Error& e) {
      // A config that is not one of integers and strings is a damaged row, whatever reads it
      // (results/stored_config.h).
      EXPECT_NE(std::string(e.what()).find("is damaged: trial 1 has an unreadable config"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(path("v.h")));
  }
  // Rows of one template with different parameters cannot share its struct.
  s.record_trial(trial(run, problem(1024, 512, 512), cfg(64), 0.02));
  EXPECT_THROW(export_cpp(s, path("tuned2.h"), false), core::Error);
  EXPECT_FALSE(fs::exists(path("tuned2.h")));
}

// An imported landscape (another tool's kernel) was emitted as a lookup of a table never
// declared: with the templates to declare given, its rows are left out, or refused when they
// are all there is.
TEST_F(Results, TheCppHeaderLeavesOutTemplatesItCannotDeclare) {
  const std::vector<DeclaredTemplate> ours = {{"matmul_sm90", cfg(128)}};
  Store s = Store::open(path("r.db"), OpenMode::ReadWrite);
  std::int64_t run = s.begin_run("tune", "", "0.1.0");
  TrialRecord landscape = trial(run, ProblemRecord{"good", "t4", 0, 0, 0, "", "", ""}, R"({"x":1})", 0.5, 0, "imported");
  landscape.tmpl = {"good", "t4", "t4"};
  landscape.env = {"good", "", "", 0, "", "", 0};
  s.record_trial(landscape);
  EXPECT_THROW(export_cpp(s, path("tuned.h"), true, {}, {}, ours), core::Error);
  EXPECT_FALSE(fs::exists(path("tuned.h")));
  s.record_trial(trial(run, problem(512, 512, 512), cfg(64), 0.01));
  EXPECT_EQ(export_cpp(s, path("tuned.h"), true, {}, {}, ours), 1);
  std::string header = slurp(path("tuned.h"));
  EXPECT_NE(header.find("//   good: 1 rows"), std::string::npos) << header;
  std::ofstream(path("use.cc")) << "#include \"tuned.h\"\nint main() { return 0; }\n";
  std::string cmd = fmt::format("cd {} && c++ -std=c++17 -Wall -Werror -fsyntax-only use.cc 2> err.txt", dir_.string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(path("err.txt")) << header;
}

}  // namespace
}  // namespace mgpu::results
