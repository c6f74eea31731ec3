// Smoke test of the embedded Python: Debian's 3.11 starts, imports optuna, and a seeded TPE
// study run through ask/tell finds the minimum of a small categorical landscape.
#include "search/optuna_study.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.h"
#include "search/python_runtime.h"

namespace mgpu::search {
namespace {

const std::vector<CategoricalParam> kSpace = {{"tile_m", {64, 128, 256}},
                                              {"stages", {2, 3, 4, 5, 6}}};

double landscape(const AskedTrial& t) {  // minimum at tile_m=128, stages=4
  return std::abs(t.values.at("tile_m") - 128) / 64.0 + std::abs(t.values.at("stages") - 4);
}

TEST(EmbeddedPython, IsDebians311) {
  EXPECT_EQ(python_version().substr(0, 5), "3.11.");
}

TEST(Optuna, AskTellStudyFindsTheMinimum) {
  OptunaStudy study("tpe", 42);
  EXPECT_FALSE(study.optuna_version().empty());
  double best = 1e9;
  for (int i = 0; i < 30; ++i) {
    AskedTrial t = study.ask(kSpace);
    EXPECT_EQ(t.number, i);
    ASSERT_EQ(t.values.size(), 2u);
    best = std::min(best, landscape(t));
    study.tell(t.number, landscape(t));
  }
  EXPECT_EQ(best, 0.0);
}

TEST(Optuna, SameSeedSameAsks) {
  auto run = [](std::uint64_t seed) {
    OptunaStudy s("tpe", seed);
    std::vector<std::map<std::string, std::int64_t>> seen;
    for (int i = 0; i < 12; ++i) {
      AskedTrial t = s.ask(kSpace);
      seen.push_back(t.values);
      s.tell(t.number, landscape(t));
    }
    return seen;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

// Issue 20: CMA-ES restarts centred where it is told, after CMA-ES trials of its own (Optuna's
// CMA-ES restores its state from a study's trials: recentring inside the old study would be
// silently ignored). A wide space, so the centre and the corner are far apart.
TEST(Optuna, CmaesRestartsCentredOnTheGivenPoint) {
  std::vector<CategoricalParam> wide;
  for (const char* name : {"a", "b", "c"}) {
    CategoricalParam p{name, {}};
    for (int i = 0; i < 16; ++i) p.choices.push_back(100 + i);
    wide.push_back(p);
  }
  OptunaStudy s("cmaes", 3);
  for (int i = 0; i < 12; ++i) {  // CMA-ES from the middle of every domain
    AskedTrial t = s.ask(wide);
    s.tell(t.number, static_cast<double>(t.values.at("a")));
  }
  const std::map<std::string, std::int64_t> corner = {{"a", 115}, {"b", 115}, {"c", 115}};
  AskedTrial pending = s.ask(wide);
  EXPECT_THROW(s.restart_cmaes_at(corner, wide, 0.5), core::Error);  // a trial is still pending
  s.tell(pending.number, 1.0);
  s.restart_cmaes_at(corner, wide, 0.5);
  int near = 0;
  for (int i = 0; i < 8; ++i) {
    AskedTrial t = s.ask(wide);
    near += t.values.at("a") >= 113 && t.values.at("b") >= 113 && t.values.at("c") >= 113;
    s.tell(t.number, 1.0 + i);
  }
  EXPECT_GE(near, 6);
  OptunaStudy tpe("tpe", 3);
  EXPECT_THROW(tpe.restart_cmaes_at(corner, wide, 0.5), core::Error);  // not CMA-ES
}

TEST(Optuna, FailedTrialsAndBadInputs) {
  OptunaStudy s("random", 1);
  AskedTrial t = s.ask(kSpace);
  s.tell_failed(t.number);
  EXPECT_THROW(s.tell(t.number, 1.0), core::Error);  // already told
  EXPECT_THROW(OptunaStudy("annealing", 1), core::Error);
}

// numpy seeds are 32-bit: the largest works (a CMA-ES restart, which seeds with seed + 1,
// included) and the next one is refused as bad input instead of a Python ValueError.
TEST(Optuna, SeedsCoverTheirWholeRangeAndNoMore) {
  for (const char* sampler : {"tpe", "cmaes", "random"}) {
    OptunaStudy s(sampler, kMaxOptunaSeed);
    AskedTrial t = s.ask(kSpace);
    s.tell(t.number, 1.0);
    if (std::string(sampler) == "cmaes") {
      s.restart_cmaes_at(t.values, kSpace, 0.5);
      s.tell(s.ask(kSpace).number, 2.0);
    }
    try {
      OptunaStudy too_big(sampler, kMaxOptunaSeed + 1);
      ADD_FAILURE() << sampler << " accepted seed 2^32";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      EXPECT_NE(std::string(e.what()).find("4294967295"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace mgpu::search
