// The tuning loop without a GPU: model-predicted runs recorded in the store, resume without
// repeats, Ctrl-C, budgets, exhaustion, and replay from a database.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <map>
#include <set>

#include "core/compiler.h"
#include "core/error.h"
#include "harness/tune/progress_printer.h"
#include "harness/tune/tuning_loop.h"
#include "kernels/matmul_template.h"
#include "results/store.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;

class TuningLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-tune-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    opts_.problem = {.m = 2048, .n = 2048, .k = 1024};
    opts_.db = (dir_ / "t.db").string();
    opts_.device = "model";
    opts_.strategy = "random";
    opts_.seed = 7;
    opts_.compile_predicted = false;  // the loop's logic, not the compiler (one test below compiles)
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::set<std::string> configs_in_db() {
    results::Store s = results::Store::open(opts_.db, results::OpenMode::ReadOnly);
    std::set<std::string> out;
    for (const auto& t : s.trials()) out.insert(t.config_json);
    return out;
  }
  fs::path dir_;
  TuneOptions opts_;
  std::atomic<bool> stop_{false};
};

TEST_F(TuningLoop, RecordsEveryTrialLabelledAsPredicted) {
  opts_.trials = 12;
  TuneReport r = tune(opts_, stop_);
  EXPECT_EQ(r.trials_this_run, 12);
  EXPECT_EQ(r.source, "model");
  ASSERT_FALSE(r.top.empty());
  EXPECT_LE(r.top.front().median_ms, r.top.back().median_ms);
  results::Store s = results::Store::open(opts_.db, results::OpenMode::ReadOnly);
  auto trials = s.trials();
  ASSERT_EQ(trials.size(), 12u);
  for (const auto& t : trials) {
    EXPECT_EQ(t.source, "model");
    EXPECT_EQ(t.env.device_name.rfind("model:", 0), 0u);
  }
  EXPECT_FALSE(s.runs().at(0).ended_at.empty());
}

TEST_F(TuningLoop, ASecondRunResumesWithoutRepeatingTrials) {
  opts_.trials = 10;
  tune(opts_, stop_);
  opts_.trials = 25;
  TuneReport second = tune(opts_, stop_);
  EXPECT_EQ(second.trials_resumed, 10);
  EXPECT_EQ(second.trials_this_run, 15);
  EXPECT_EQ(configs_in_db().size(), 25u);  // 25 distinct configs: none measured twice
  TuneReport third = tune(opts_, stop_);     // nothing left to do for 25
  EXPECT_EQ(third.trials_this_run, 0);
}

TEST_F(TuningLoop, InterruptStopsAfterCommittingAndResumeFinishes) {
  opts_.trials = 40;
  opts_.strategy = "tpe";
  TuneReport r = tune(opts_, stop_, [&](const Progress& p) {
    if (p.done == 6) stop_ = true;  // Ctrl-C arrives during the 6th trial
  });
  EXPECT_TRUE(r.interrupted);
  EXPECT_GE(r.trials_this_run, 6);
  EXPECT_LE(r.trials_this_run, 8);  // at most the rest of the batch in flight
  int done = static_cast<int>(configs_in_db().size());
  EXPECT_EQ(done, r.trials_this_run);
  stop_ = false;
  TuneReport rest = tune(opts_, stop_);
  EXPECT_EQ(rest.trials_resumed, done);
  EXPECT_EQ(configs_in_db().size(), 40u);
}

TEST_F(TuningLoop, BudgetsAndExhaustion) {
  opts_.trials = 100000;
  opts_.time_budget_s = 1e-6;  // spent before the first trial
  EXPECT_EQ(tune(opts_, stop_).trials_this_run, 0);
  opts_.strategy = "tpe";  // tens of ms per suggestion: a 2 s budget ends the run early
  opts_.time_budget_s = 2.0;
  TuneReport r = tune(opts_, stop_);
  EXPECT_GT(r.trials_this_run, 0);
  EXPECT_LT(r.trials_this_run, 2000);
  EXPECT_FALSE(r.exhausted);
  opts_.time_budget_s = 0;
  opts_.strategy = "exhaustive";
  // Exhaustion over a whole space: the Blackwell template's (thousands of configs), not the
  // Hopper one's (tens of thousands since swap_ab), which would only make the test longer.
  opts_.arch = "sm_100a";
  opts_.problem = {.m = 256, .n = 256, .k = 64, .out_dtype = kernels::DType::F32};
  TuneReport all = tune(opts_, stop_);
  EXPECT_TRUE(all.exhausted);
  EXPECT_GT(all.trials_this_run, 100);
}

TEST_F(TuningLoop, ReplayAnswersFromAnotherDatabase) {
  opts_.trials = 15;
  TuneReport first = tune(opts_, stop_);
  TuneOptions replay = opts_;
  replay.db = (dir_ / "replay.db").string();
  replay.device = "replay:" + opts_.db;
  replay.trials = 15;
  TuneReport r = tune(replay, stop_);
  EXPECT_EQ(r.source, "replay");
  EXPECT_EQ(r.failed, 0);  // the same seed asks the same 15 configs: all are in the database
  ASSERT_FALSE(r.top.empty());
  EXPECT_DOUBLE_EQ(r.top.front().median_ms, first.top.front().median_ms);
}

TEST_F(TuningLoop, AutoWithoutAGpuSaysItPredicts) {
  opts_.device = "auto";
  opts_.trials = 2;
  std::string note;
  opts_.notify = [&](const std::string& n) { note += n + "\n"; };
  TuneReport r = tune(opts_, stop_);
  if (r.source == "model") {
    EXPECT_NE(note.find("nothing will be measured"), std::string::npos) << note;
    EXPECT_NE(note.find("Predicting with the cost model"), std::string::npos) << note;
  }
}

TEST_F(TuningLoop, PredictionsAreForKernelsThatCompiled) {
  // With compile_predicted, every ranked config's kernel went through the compiler first:
  // the compile cache (a fresh one here) holds one entry per distinct kernel predicted.
  fs::path cache = dir_ / "cache";
  ::setenv("MGPU_CACHE_DIR", cache.c_str(), 1);
  opts_.compile_predicted = true;
  opts_.verify = false;  // this test is about the compiles (verification: the test below, and cli.*)
  opts_.trials = 4;
  TuneReport r = tune(opts_, stop_);
  ::unsetenv("MGPU_CACHE_DIR");
  EXPECT_EQ(r.trials_this_run, 4);
  EXPECT_EQ(r.failed, 0);
  std::set<std::string> kernels;
  for (const std::string& json : configs_in_db()) {
    core::TuningConfig c = core::TuningConfig::from_json(json);
    kernels.insert(kernels::matmul_template(core::parse_arch(opts_.arch)).build(opts_.problem, c).mlir);
  }
  int entries = 0;
  for (const auto& f : fs::recursive_directory_iterator(cache))
    if (f.is_regular_file() && f.path().extension() == ".mgpu") ++entries;
  EXPECT_EQ(entries, static_cast<int>(kernels.size()));
}

TEST_F(TuningLoop, AConfigTheVirtualDeviceFailedIsRecordedFailedAndNeverRanks) {
  // The cost model's favourite, whose kernel an earlier verification found racy at this
  // problem's class: the tuner must not predict it, let alone rank it.
  const kernels::MatmulTemplate& t = kernels::matmul_template(core::parse_arch(opts_.arch));
  std::optional<core::TuningConfig> favourite;
  double best = 0;
  t.space().enumerate([&](const core::TuningConfig& c) {
    if (t.why_invalid(opts_.problem, c)) return;
    double ms = t.predict_ms(opts_.problem, c, t.arch().default_device());
    if (!favourite || ms < best) favourite = c, best = ms;
  });
  ASSERT_TRUE(favourite);
  core::CompileOptions co;
  core::CompileResult compiled = core::compile_module(t.build(opts_.problem, *favourite).mlir, t.arch(), co);
  const std::string hash = core::kernel_hash(compiled.units.at(0).ptx);
  const std::string cls = kernels::classify(opts_.problem, t.kernel_shape(*favourite), t.arch().default_device().sm_count).key();
  {
    results::Store s = results::Store::open(opts_.db, results::OpenMode::ReadWrite);
    results::TrialRecord v;
    v.run_id = s.begin_run("verify", "verify matmul", "test");
    v.tmpl = {std::string(t.name()), std::string(t.source_hash()), "b"};
    v.problem = {"matmul", "m128_n128_k320_bf16_bf16_kn", 128, 128, 320, "bf16", "bf16", "kn"};
    v.config_json = favourite->to_json();
    v.env = {"mgpu-tune virtual sm_90a (emulated)", "sm_90a", "9.0", 132, "", "", 0};
    v.status = "hazard";
    v.source = "emulate";
    v.message = "async-overlap: shared memory written while a wgmma still reads it";
    v.kernel_hash = hash;
    v.problem_class = cls;
    s.record_trial(v);
  }
  ::setenv("MGPU_CUDA_DRIVER", MGPU_VCUDA_LIB, 1);  // found beside mgpu-tune; a test binary is elsewhere
  opts_.compile_predicted = true;
  opts_.strategy = "model";  // asks the favourite first
  opts_.trials = 1;          // only it: an answer from the store, no worker needed
  TuneReport r = tune(opts_, stop_);
  ::unsetenv("MGPU_CUDA_DRIVER");
  EXPECT_EQ(r.verify_failed, 1);
  EXPECT_TRUE(r.top.empty());
  results::Store s = results::Store::open(opts_.db, results::OpenMode::ReadOnly);
  results::TrialFilter model;
  model.source = "model";
  auto rows = s.trials(model);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].config_json, favourite->to_json());
  EXPECT_EQ(rows[0].status, "hazard");
  EXPECT_FALSE(rows[0].median_ms);
  EXPECT_NE(rows[0].message.find("failed verification on the virtual device at " + cls), std::string::npos) << rows[0].message;
  EXPECT_NE(rows[0].message.find("async-overlap"), std::string::npos);
  EXPECT_EQ(rows[0].kernel_hash, hash);
  EXPECT_EQ(rows[0].problem_class, cls);
  EXPECT_TRUE(s.best(true).empty());  // nothing to rank, nothing to export
}

TEST_F(TuningLoop, ANewShapeMeasuresItsNeighboursWinnersFirst) {
  opts_.strategy = "exhaustive";
  opts_.trials = 30;
  TuneReport near = tune(opts_, stop_);  // 2048 x 2048 x 1024
  ASSERT_FALSE(near.top.empty());
  kernels::MatmulProblem far = opts_.problem;
  far.m = 64;  // tuned later: farther from the shape below
  TuneOptions o = opts_;
  o.problem = far;
  tune(o, stop_);

  o.problem.m = 1536;  // nearest to 2048 x 2048 x 1024
  o.strategy = "random";
  o.trials = 1;
  std::vector<std::string> notes;
  o.notify = [&](const std::string& s) { notes.push_back(s); };
  TuneReport r = tune(o, stop_);
  o.notify = nullptr;
  // Said as it is: one of the two warm-start configs runs (round 19, F49: "room for 1 trials, all
  // taken by the 2 warm-start configs").
  bool said = false;
  for (const std::string& n : notes)
    said |= n.find("--trials 1 leaves room for 1 trial: only 1 of the 2 warm-start configs runs,") != std::string::npos;
  EXPECT_TRUE(said) << ::testing::PrintToString(notes);
  ASSERT_EQ(r.warm_started_from.size(), 2u);
  EXPECT_EQ(r.warm_started_from[0], opts_.problem.key());
  EXPECT_EQ(r.warm_started_from[1], far.key());
  results::Store s = results::Store::open(opts_.db, results::OpenMode::ReadOnly);
  std::vector<std::string> measured;
  std::map<std::string, double> near_ms;  // config -> its time on the nearest shape
  for (const auto& t : s.trials()) {
    if (t.problem.key == o.problem.key()) measured.push_back(t.config_json);
    if (t.problem.key == opts_.problem.key() && t.median_ms) near_ms[t.config_json] = *t.median_ms;
  }
  ASSERT_EQ(measured.size(), 1u);
  // The one trial it had went to a winner of the nearest shape (ties share the best time).
  ASSERT_TRUE(near_ms.count(measured[0]));
  EXPECT_DOUBLE_EQ(near_ms.at(measured[0]), near.top.front().median_ms);

  o.problem.m = 1280;
  o.warm_start_shapes = 0;  // off: the strategy's own first pick
  EXPECT_TRUE(tune(o, stop_).warm_started_from.empty());
}

// The soak found it: a first run killed before its schema committed leaves the file blank, and
// the next run's warm start (on by default) refused it as "not an mgpu-tune results database".
TEST_F(TuningLoop, ARunResumesADatabaseAKilledFirstRunLeftBlank) {
  std::ofstream(opts_.db).close();
  ASSERT_GT(opts_.warm_start_shapes, 0);
  opts_.trials = 3;
  TuneReport r = tune(opts_, stop_);
  EXPECT_TRUE(r.warm_started_from.empty());
  EXPECT_EQ(configs_in_db().size(), 3u);
}

TEST_F(TuningLoop, BadInputIsRefusedBeforeTheDatabaseIsTouched) {
  opts_.problem.k = 100;  // rows not 16-byte aligned
  EXPECT_THROW(tune(opts_, stop_), core::Error);
  opts_.problem.k = 1024;
  opts_.strategy = "annealing";
  EXPECT_THROW(tune(opts_, stop_), core::Error);
  opts_.strategy = "random";
  opts_.device = "tpu";
  EXPECT_THROW(tune(opts_, stop_), core::Error);
  EXPECT_FALSE(fs::exists(opts_.db));
}

// --device emulate's memory need (round 4, AB01): the virtual device's buffers against its
// memory, then everything the worker holds -- the float64 reference above all -- against the
// machine's. 65536 x 65536 x 8192 bf16: 10 GiB of buffers fit 16 GiB; with the reference (32
// GiB), the inputs (2 GiB) and two copies of C (16 GiB) it needs 60 GiB.
TEST(EmulateMemory, TheFloat64ReferenceCounts) {
  constexpr double kGiB = double(1 << 30);
  const kernels::MatmulProblem big{.m = 65536, .n = 65536, .k = 8192};
  EXPECT_EQ(why_too_big_to_emulate(big, 16 * kGiB, 64 * kGiB), std::nullopt);
  const std::optional<std::string> why = why_too_big_to_emulate(big, 16 * kGiB, 23.5 * kGiB);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("m65536_n65536_k8192_bf16_bf16_kn needs 60.0 GiB of memory: 10.0 GiB on the virtual device and "
                      "50.0 GiB on the host (the float64 reference its result is checked against, 32.0 GiB, and copies "
                      "of the inputs and the result); this machine has 23.5 GiB"),
            std::string::npos)
      << *why;
  const std::optional<std::string> device = why_too_big_to_emulate({.m = 65536, .n = 65536, .k = 65536}, 16 * kGiB, 1e15);
  ASSERT_TRUE(device.has_value());
  EXPECT_NE(device->find("needs 24.0 GiB of device memory; the virtual device has 16 GiB"), std::string::npos) << *device;
  EXPECT_EQ(why_too_big_to_emulate({.m = 128, .n = 128, .k = 128}, 16 * kGiB, 1 * kGiB), std::nullopt);
}

// The progress line's ETA in 64 bits (10^9 trials is a legal budget: its ETA passed 2^31 s and
// printed as INT_MIN), and the virtual device's progress as verdicts, not "no result yet".
TEST(ProgressLine, EtaBeyondTwoToThe31SecondsAndTheVirtualDevicesVerdicts) {
  Progress p;
  p.done = 1;
  p.target = 100000001;
  p.elapsed_s = 1;  // 10^8 s to go: 27777:46:40
  EXPECT_NE(ProgressPrinter::summary(p).find("ETA 27777:46:40"), std::string::npos) << ProgressPrinter::summary(p);
  p.target = 1000000000;
  p.elapsed_s = 5;  // 5 x 10^9 s: past 2^31
  EXPECT_NE(ProgressPrinter::summary(p).find("ETA over ten years"), std::string::npos) << ProgressPrinter::summary(p);
  EXPECT_NE(ProgressPrinter::summary(p).find("no result yet"), std::string::npos);
  p.verified_failed = std::make_pair(29, 1);
  const std::string line = ProgressPrinter::summary(p);
  EXPECT_NE(line.find("29 verified, 1 failed on the virtual device"), std::string::npos) << line;
  EXPECT_EQ(line.find("no result yet"), std::string::npos) << line;
}

}  // namespace
}  // namespace mgpu::harness
