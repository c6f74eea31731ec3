// The measurement core without a GPU: statistics, the stopping rule, status and JSON round
// trips, the model measurer's sanity, and crash containment with real worker processes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/measure_trial.h"
#include "harness/measure/measurement.h"
#include "harness/measure/replay_measurer.h"
#include "harness/measure/stopping_rule.h"
#include "harness/measure/trial_request.h"
#include "harness/measure/worker.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/cost_model.h"
#include "kernels/matmul_sm90/validity.h"
#include "results/store.h"

namespace mgpu::harness {
namespace {

TEST(Statistics, MedianMinMeanAndRelativeNoise) {
  SampleStats s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);  // sample stdev / mean
  EXPECT_DOUBLE_EQ(summarize({7.0}).noise, 0.0);
  EXPECT_DOUBLE_EQ(summarize({}).median, 0.0);
}

TEST(StoppingRule, NeedsMinimumSamplesAndTimeThenStopsOnNoise) {
  StoppingRule rule{.min_samples = 5, .max_noise = 0.01, .min_time_s = 0.010, .max_time_s = 1.0};
  SampleCollector c(rule);
  for (int i = 0; i < 4; ++i) {
    c.add(5.0);  // perfectly quiet, but too few samples
    EXPECT_FALSE(c.done(0.1));
  }
  c.add(5.0);
  EXPECT_TRUE(c.converged());
  EXPECT_TRUE(c.done(0.1));

  SampleCollector short_time(StoppingRule{.min_samples = 2, .max_noise = 0.01, .min_time_s = 1.0, .max_time_s = 9});
  for (int i = 0; i < 10; ++i) short_time.add(1.0);  // 10 ms measured < 1 s minimum
  EXPECT_FALSE(short_time.converged());
}

TEST(StoppingRule, NoisySamplesStopAtTheTimeLimitUnconverged) {
  SampleCollector c(StoppingRule{.min_samples = 3, .max_noise = 0.01, .min_time_s = 0, .max_time_s = 2.0});
  for (int i = 0; i < 50; ++i) c.add(i % 2 ? 1.0 : 2.0);  // 33% noise
  EXPECT_FALSE(c.converged());
  EXPECT_FALSE(c.done(1.9));
  EXPECT_TRUE(c.done(2.0));
  EXPECT_TRUE(StoppingRule::strict().min_samples > StoppingRule::quick().min_samples);
  EXPECT_LT(StoppingRule::strict().max_noise, StoppingRule::quick().max_noise);
}

TEST(Measurement, StatusNamesAndJsonRoundTrip) {
  for (TrialStatus s : {TrialStatus::Ok, TrialStatus::CompileError, TrialStatus::LaunchError, TrialStatus::Fault,
                        TrialStatus::Timeout, TrialStatus::WrongResult, TrialStatus::InvalidConfig})
    EXPECT_EQ(parse_trial_status(to_string(s)), s);
  EXPECT_THROW(parse_trial_status("great"), core::Error);
  Measurement m;
  m.status = TrialStatus::WrongResult;
  m.source = "cuda";
  m.samples_ms = {1.5, 1.25};
  m.median_ms = 1.375;
  m.verification_error = 0.25;
  m.timer = "cupti";
  Measurement back = nlohmann::json(m).get<Measurement>();
  EXPECT_EQ(back.timer, "cupti");
  EXPECT_EQ(back.status, m.status);
  EXPECT_EQ(back.samples_ms, m.samples_ms);
  EXPECT_EQ(back.verification_error, m.verification_error);
  EXPECT_FALSE(nlohmann::json(Measurement{}).get<Measurement>().verification_error.has_value());
}

TrialRequest model_request() {
  TrialRequest r;
  r.problem = {.m = 4096, .n = 4096, .k = 4096};
  r.config = kernels::sm90::MatmulConfig{}.to_tuning_config();
  r.measurer = "model";
  return r;
}

TEST(TrialRequest, JsonRoundTrip) {
  TrialRequest r = model_request();
  r.problem.b_layout = kernels::BLayout::NK;
  r.rule = StoppingRule::strict();
  r.timer = "events";
  r.compile = false;
  TrialRequest back = nlohmann::json(r).get<TrialRequest>();
  EXPECT_EQ(back.timer, "events");
  EXPECT_FALSE(back.compile);
  EXPECT_EQ(back.problem.key(), r.problem.key());
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.rule.min_samples, r.rule.min_samples);
  EXPECT_FALSE(back.defects.known);  // no evidence stays no evidence
  r.defects.known = true;
  r.defects.serialised_mma = kernels::KernelDefects::Serialised::EveryStep;
  r.defects.epilogue_bank_ways = 8;
  back = nlohmann::json(r).get<TrialRequest>();
  EXPECT_TRUE(back.defects.known);
  EXPECT_EQ(back.defects.serialised_mma, kernels::KernelDefects::Serialised::EveryStep);
  EXPECT_EQ(back.defects.epilogue_bank_ways, 8);
}

// A model trial with lint evidence is predicted slower than without, and says by how much.
TEST(ModelMeasurer, ChargesTheKernelsLintsAndSaysSo) {
  TrialRequest r = model_request();
  r.compile = false;
  Measurement plain = measure_trial(r);
  r.defects.known = true;
  Measurement clean = measure_trial(r);
  r.defects.epilogue_bank_ways = 8;
  Measurement linted = measure_trial(r);
  EXPECT_EQ(clean.median_ms, plain.median_ms);
  EXPECT_EQ(clean.message, "lints: none");
  EXPECT_EQ(plain.message, "");
  EXPECT_GT(linted.median_ms, plain.median_ms);
  EXPECT_NE(linted.message.find("lint penalties: bank-conflicts +"), std::string::npos) << linted.message;
}

TEST(Timer, ChoicesAndTheirErrors) {
  EXPECT_EQ(choose_timer("events"), Timer::Events);
  try {
    check_timer_choice("stopwatch");
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("unknown timer 'stopwatch': choose auto, cupti or events"), std::string::npos);
  }
  // auto never fails: CUPTI where it traces (a GPU machine), CUDA events elsewhere.
  Timer t = choose_timer("auto");
  EXPECT_TRUE(t == Timer::Cupti || t == Timer::Events);
  try {
    EXPECT_EQ(choose_timer("cupti"), Timer::Cupti);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::Unavailable);  // asked by name, refused with a reason
    EXPECT_EQ(t, Timer::Events);
  }
}

TEST(ModelMeasurer, PredictsAboveTheRooflineAndExplainsInvalidConfigs) {
  Measurement m = measure_trial(model_request());
  ASSERT_EQ(m.status, TrialStatus::Ok) << m.message;
  EXPECT_EQ(m.source, "model");
  double flops = 2.0 * 4096 * 4096 * 4096;
  double floor_ms = flops / (989.4e12) * 1e3;
  EXPECT_GT(m.median_ms, floor_ms);
  EXPECT_LT(m.median_ms, 10 * floor_ms);  // a sane config is not predicted absurdly slow

  TrialRequest bad = model_request();
  bad.config.set("tile_m", std::int64_t{96});
  Measurement mb = measure_trial(bad);
  EXPECT_EQ(mb.status, TrialStatus::InvalidConfig);
  EXPECT_NE(mb.message.find("tile_m 96"), std::string::npos) << mb.message;

  TrialRequest unknown = model_request();
  unknown.measurer = "guess";
  EXPECT_THROW(measure_trial(unknown), core::Error);
}

TEST(CostModel, NeverBelowTheRooflineAndNeverWorseWithMoreStages) {
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  for (kernels::MatmulProblem p : {kernels::MatmulProblem{.m = 8192, .n = 8192, .k = 8192},
                                   kernels::MatmulProblem{.m = 256, .n = 8192, .k = 1024},
                                   kernels::MatmulProblem{.m = 1000, .n = 776, .k = 64}}) {
    int checked = 0;
    kernels::sm90::default_space().enumerate([&](const core::TuningConfig& t) {
      auto c = kernels::sm90::MatmulConfig::from_tuning_config(t);
      if (kernels::sm90::why_invalid(p, c, arch)) return;
      auto pred = kernels::sm90::predict(p, c, arch.default_device());
      ASSERT_GE(pred.ms, pred.roofline_ms) << t.to_json();
      if (c.max_concurrent_steps < 6) {
        auto more = c;
        more.max_concurrent_steps += 1;
        if (!kernels::sm90::why_invalid(p, more, arch)) {
          ASSERT_LE(kernels::sm90::predict(p, more, arch.default_device()).ms, pred.ms) << t.to_json();
        }
      }
      ++checked;
    });
    EXPECT_GT(checked, 1000);
  }
}

TEST(CostModel, WaveQuantizationCostsALastPartialWave) {
  // 132 tiles fill one wave on 132 SMs; 133 tiles need a second wave for one tile.
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  kernels::sm90::MatmulConfig c;  // CTA tile 256 x 128
  kernels::MatmulProblem full{.m = 256 * 12, .n = 128 * 11, .k = 4096};
  kernels::MatmulProblem plus_one{.m = 256 * 12 + 1, .n = 128 * 11, .k = 4096};
  double per_flop_full = kernels::sm90::predict(full, c, arch.default_device()).ms / full.flops();
  double per_flop_more = kernels::sm90::predict(plus_one, c, arch.default_device()).ms / plus_one.flops();
  EXPECT_GT(per_flop_more, 1.5 * per_flop_full);
}

class Worker : public ::testing::Test {
 protected:
  WorkerProcess worker_{{MGPU_TUNE_EXE, "worker"}, /*timeout_s=*/5.0};  // room for a loaded CI machine
};

TEST_F(Worker, AnswersTrials) {
  Measurement m = worker_.run(model_request());
  EXPECT_EQ(m.status, TrialStatus::Ok) << m.message;
  EXPECT_GT(m.median_ms, 0);
  EXPECT_EQ(worker_.run(model_request()).median_ms, m.median_ms);  // deterministic model
  EXPECT_EQ(worker_.restarts(), 0);
}

TEST_F(Worker, ACrashIsRecordedAsAFaultAndTheNextTrialRuns) {
  TrialRequest crash = model_request();
  crash.debug_fault = "crash";
  Measurement m = worker_.run(crash);
  EXPECT_EQ(m.status, TrialStatus::Fault);
  EXPECT_NE(m.message.find("signal 11"), std::string::npos) << m.message;
  EXPECT_EQ(worker_.restarts(), 1);
  EXPECT_EQ(worker_.run(model_request()).status, TrialStatus::Ok);
}

TEST_F(Worker, AHangIsKilledAtTheWatchdogAndTheNextTrialRuns) {
  TrialRequest hang = model_request();
  hang.debug_fault = "hang";
  Measurement m = worker_.run(hang);
  EXPECT_EQ(m.status, TrialStatus::Timeout);
  EXPECT_NE(m.message.find("killed"), std::string::npos) << m.message;
  EXPECT_EQ(worker_.pid(), -1);
  Measurement next = worker_.run(model_request());
  EXPECT_EQ(next.status, TrialStatus::Ok);
  EXPECT_EQ(worker_.restarts(), 1);
}

TEST_F(Worker, AnExitMidTrialIsAFault) {
  TrialRequest quit = model_request();
  quit.debug_fault = "exit";
  Measurement m = worker_.run(quit);
  EXPECT_EQ(m.status, TrialStatus::Fault);
  EXPECT_NE(m.message.find("status 3"), std::string::npos) << m.message;
  EXPECT_EQ(worker_.run(model_request()).status, TrialStatus::Ok);
}

TEST_F(Worker, AMalformedRequestIsAnsweredNotFatal) {
  TrialRequest bad = model_request();
  bad.arch = "sm_42";
  Measurement m = worker_.run(bad);
  EXPECT_EQ(m.status, TrialStatus::InvalidConfig);
  EXPECT_NE(m.message.find("sm_42"), std::string::npos);
  EXPECT_EQ(worker_.restarts(), 0);
}

}  // namespace
}  // namespace mgpu::harness

namespace mgpu::harness {
namespace {

TEST(ReplayMeasurer, AnswersWhatTheDatabaseMeasuredAndNothingElse) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mgpu-replay-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "measured.db").string();
  TrialRequest req = model_request();
  {
    results::Store s = results::Store::open(db, results::OpenMode::ReadWrite);
    results::TrialRecord t;
    t.run_id = s.begin_run("tune", "matmul", "test");
    t.tmpl = {"matmul_sm90", "hash", "backend"};
    t.problem = {"matmul", req.problem.key(), req.problem.m, req.problem.n, req.problem.k, "bf16", "bf16", "kn"};
    t.config_json = req.config.to_json();
    t.env = {"NVIDIA H100 80GB HBM3", "sm_90a", "9.0", 132, "570", "13.0", 1980};
    t.median_ms = t.min_ms = t.mean_ms = 0.5;
    t.samples_ms = {0.5, 0.5};
    t.timer = "cupti";
    s.record_trial(t);
    t.median_ms = 0.25;  // a later measurement of the same config wins
    s.record_trial(t);
  }
  ReplayMeasurer replay(db, "matmul_sm90", req.problem.key());
  EXPECT_EQ(replay.known_configs(), 1u);
  Measurement m = replay.measure(req);
  EXPECT_EQ(m.status, TrialStatus::Ok);
  EXPECT_EQ(m.source, "replay");
  EXPECT_EQ(m.median_ms, 0.25);
  EXPECT_EQ(m.timer, "cupti");
  TrialRequest other = req;
  other.config.set("tile_n", std::int64_t{64});
  EXPECT_EQ(replay.measure(other).status, TrialStatus::InvalidConfig);
  // A database with no result for the problem is refused up front (bad input), not replayed as
  // a budget of invalid_config trials (robustness round 4, A20).
  try {
    ReplayMeasurer(db, "matmul_sm90", "m1_n1_k1_bf16_bf16_kn");
    ADD_FAILURE() << "a database with nothing to replay for the problem was accepted";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("nothing to replay"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReplayMeasurer((dir / "absent.db").string(), "matmul_sm90", req.problem.key()), core::Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mgpu::harness
