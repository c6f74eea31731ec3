// The cost model's lint penalties (issue 19): a kernel with serialised MMAs, spills, local
// memory or a GPU-wide MEMBAR in its k-loop, a dropped setmaxnreg or conflicting epilogue
// stores is predicted slower than the same config clean -- at a compute-bound and a
// memory-bound size, never below the roofline -- and the configs the model ranks exactly
// equal today part when one has a lint. Evidence is made by hand, or read from the SASS
// fixtures (tests/data/sass).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/sass/performance_lints.h"
#include "core/sass/sass_profile.h"
#include "kernels/matmul_common/kernel_defects.h"
#include "kernels/matmul_sm90/cost_model.h"
#include "kernels/matmul_template.h"
#include "tests/support/test_data.h"

namespace mgpu::kernels {
namespace {

const core::ArchSpec& hopper() { return core::parse_arch("sm_90a"); }
const core::DeviceSpec& h100() { return hopper().default_device(); }

MatmulProblem cube(std::int64_t n) { return {.m = n, .n = n, .k = n}; }

KernelDefects clean() {
  KernelDefects d;
  d.known = true;
  return d;
}

// One defect each, as defects_of() would give it.
std::map<std::string, KernelDefects> one_lint_each() {
  std::map<std::string, KernelDefects> out;
  KernelDefects d = clean();
  d.setmaxnreg_dropped = true;
  out["setmaxnreg-dropped"] = d;
  d = clean();
  d.serialised_mma = KernelDefects::Serialised::FirstStep;
  out["serialised-mma"] = d;
  d = clean();
  d.spill_bytes = 96;
  out["spills"] = d;
  d = clean();
  d.main_loop_local_ops = 8;
  out["local-memory-in-main-loop"] = d;
  d = clean();
  d.main_loop_membars = 1;
  out["membar-in-main-loop"] = d;
  d = clean();
  d.epilogue_bank_ways = 8;
  out["bank-conflicts"] = d;
  return out;
}

TEST(LintPenalties, EachLintIsPredictedSlowerThanItsCleanTwinNeverBelowTheRoofline) {
  const sm90::MatmulConfig c;  // the template's default
  // 4096^3 is compute-bound; 256 x 256 x 8192 is memory- and overhead-bound.
  for (const MatmulProblem& p : {cube(4096), MatmulProblem{.m = 256, .n = 256, .k = 8192}}) {
    const Prediction none = sm90::predict(p, c, h100());
    const Prediction clean_one = sm90::predict(p, c, h100(), clean());
    EXPECT_EQ(clean_one.ms, none.ms) << "a clean kernel costs what a kernel without evidence does";
    EXPECT_TRUE(clean_one.lint_penalties.empty());
    for (const auto& [code, defects] : one_lint_each()) {
      const Prediction linted = sm90::predict(p, c, h100(), defects);
      EXPECT_GT(linted.ms, none.ms) << code << " at " << p.key();
      EXPECT_GE(linted.ms, linted.roofline_ms) << code;
      ASSERT_EQ(linted.lint_penalties.size(), 1u) << code;
      EXPECT_EQ(linted.lint_penalties[0].code, code);
      EXPECT_NEAR(linted.ms - none.ms, linted.lint_ms, 1e-12) << code;
    }
  }
}

TEST(LintPenalties, PenaltiesGrowWithTheirEvidence) {
  const sm90::MatmulConfig c;
  const MatmulProblem p = cube(4096);
  auto ms = [&](const KernelDefects& d) { return sm90::predict(p, c, h100(), d).ms; };
  KernelDefects first = clean(), every = clean();
  first.serialised_mma = KernelDefects::Serialised::FirstStep;
  every.serialised_mma = KernelDefects::Serialised::EveryStep;
  EXPECT_GT(ms(every), ms(first));
  KernelDefects two = clean(), eight = clean();
  two.epilogue_bank_ways = 2;
  eight.epilogue_bank_ways = 8;
  EXPECT_GT(ms(eight), ms(two));
  EXPECT_GT(ms(two), ms(clean()));
  // Several lints add up.
  KernelDefects both = eight;
  both.serialised_mma = KernelDefects::Serialised::FirstStep;
  EXPECT_NEAR(ms(both) - ms(clean()), (ms(eight) - ms(clean())) + (ms(first) - ms(clean())), 1e-12);
}

// The figures behind the header's reasoning, for the default config at 4096^3 on an H100 SXM
// (1980 MHz; 512 CTA tiles of 256 x 128: 4 waves on 132 SMs): pinned so a change to a
// penalty is a visible decision.
TEST(LintPenalties, TheDocumentedFiguresForTheDefaultConfig) {
  const sm90::MatmulConfig c;
  const MatmulProblem p = cube(4096);
  const PersistentCost t = sm90::cost_terms(p, c);
  EXPECT_EQ(t.mmas_per_step, 8);                // 2 x m64 blocks x 4 k16 steps
  EXPECT_DOUBLE_EQ(t.mma_operand_bytes, 6144);  // (64 + 128) x 16 x 2 bytes
  EXPECT_EQ(t.uniform_registers, 168);          // 65536 / 384, a multiple of 8
  EXPECT_DOUBLE_EQ(t.accumulator_registers, 128);
  const double clock_ms = 1.0 / (h100().boost_clock_mhz * 1e3);
  const double waves = 4;
  auto penalty = [&](const KernelDefects& d) { return sm90::predict(p, c, h100(), d).lint_ms; };
  KernelDefects d = clean();
  d.epilogue_bank_ways = 8;  // today's unswizzled staging: 7 extra wavefronts per store
  EXPECT_NEAR(penalty(d), waves * 7 * (256.0 * 128 * 2 / 128) * clock_ms, 1e-12);
  d = clean();
  d.serialised_mma = KernelDefects::Serialised::FirstStep;
  EXPECT_NEAR(penalty(d), waves * 2 * 8 * (6144.0 / 128) * clock_ms, 1e-12);
  d = clean();
  d.spill_bytes = 96;
  EXPECT_NEAR(penalty(d), waves * 2 * 96 * 384.0 / 128 * clock_ms, 1e-12);
  d = clean();
  d.main_loop_membars = 2;
  EXPECT_NEAR(penalty(d), waves * 64 * 2 * 730 * clock_ms, 1e-12);  // 64 k-steps of 64
}

// Measured on an H100 (kernels/matmul_sm90/cost_model.cc): a 2-CTA cluster slows the same
// tiles by about 3%; the model must not rank it level with (or above) its unclustered twin.
TEST(CostModelSm90, AClusteredConfigIsPredictedSlowerThanItsTwin) {
  const MatmulProblem p = cube(4096);
  sm90::MatmulConfig plain, m, n;
  m.cluster_dimension = sm90::ClusterDim::M;
  n.cluster_dimension = sm90::ClusterDim::N;
  const double t = sm90::predict(p, plain, h100(), clean()).ms;
  // A few percent, as the H100 measured once the consumers' remote arrive was relaxed; not the
  // 1.3-1.7x of the .release.cluster arrive's MEMBAR.ALL.GPU.
  for (const sm90::MatmulConfig& c : {m, n}) {
    const double tc = sm90::predict(p, c, h100(), clean()).ms;
    EXPECT_GT(tc, t);
    EXPECT_LT(tc, 1.1 * t);
  }
  EXPECT_DOUBLE_EQ(sm90::cost_terms(p, plain).mma_efficiency, 1.0);
}

// The fifth GPU run (H200, README): at 1 x 4096 x 14336 (B as N x K) the swap_ab kernel split 4
// ways ran 0.0381 ms, the ping-pong data-parallel config the lease's model strategy picked
// 0.0471 ms, unsplit 0.0566 ms. With the H200's rates the model orders them as the card did
// (0.0341, 0.0413, 0.0491 ms); with the H100's bandwidth it puts ping-pong first (0.0453 against
// 0.0466 ms split) -- and the lease ranked with the H100's rates on the H200, so it never
// proposed split-K. The tuning loop now predicts with the GPU's own rates (tuning_loop.cc).
TEST(CostModelSm90, TheH200sDecodeOrderSplitKAheadOfDataParallel) {
  const core::DeviceSpec* h200 = hopper().find_device("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  const kernels::MatmulTemplate& t = matmul_template(hopper());
  const MatmulProblem p{.m = 1, .n = 4096, .k = 14336, .b_layout = BLayout::NK};
  auto cfg = [&](const std::string& json) {
    core::TuningConfig c = t.default_config();
    const core::TuningConfig given = core::TuningConfig::from_json(json);
    for (const auto& [k, v] : given.values()) c.set(k, v);
    t.require_valid(p, c);
    return c;
  };
  const core::TuningConfig split4 = cfg(
      R"({"swap_ab":"yes","tile_m":16,"tile_n":64,"wg_dimension":"N","max_concurrent_steps":6,"schedule":"split_k","split_k":4})");
  const core::TuningConfig pingpong = cfg(
      R"({"cluster_dimension":"none","consumers":"pingpong","epi_tile_m":64,"epi_tile_n":32,"grid_minor_dim":"N",)"
      R"("grid_tile_width":1,"max_concurrent_steps":4,"schedule":"data_parallel","split_k":1,"swap_ab":"yes",)"
      R"("tile_k":128,"tile_m":8,"tile_n":64,"wg_dimension":"M"})");
  const core::TuningConfig unsplit = cfg(R"({"swap_ab":"yes","tile_m":16,"tile_n":64,"wg_dimension":"N","max_concurrent_steps":6})");
  const double s = t.predict_ms(p, split4, *h200), pp = t.predict_ms(p, pingpong, *h200), u = t.predict_ms(p, unsplit, *h200);
  EXPECT_LT(s, pp) << "split 4 ways (0.0381 ms on the H200) against ping-pong (0.0471 ms)";
  EXPECT_LT(s, u) << "split 4 ways (0.0381 ms on the H200) against unsplit (0.0566 ms)";
}

// Today the model ranks very different configs exactly equal at 4096^3 (issue 19); a lint on
// one of a tied group puts it behind the others, and the template face carries the evidence.
TEST(LintPenalties, ATieAtTheTopOfTheRankingPartsWhenOneHasALint) {
  const MatmulTemplate& t = matmul_template(hopper());
  const MatmulProblem p = cube(4096);
  std::vector<std::pair<double, core::TuningConfig>> ranked;
  for (const core::TuningConfig& c : t.valid_configs({p})) ranked.push_back({t.predict_ms(p, c, h100()), c});
  ASSERT_FALSE(ranked.empty());
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<core::TuningConfig> top;
  for (const auto& [ms, c] : ranked)
    if (ms == ranked.front().first) top.push_back(c);
  KernelDefects banks = clean();
  banks.epilogue_bank_ways = 8;
  const double linted = t.predict(p, top.front(), h100(), banks).ms;
  EXPECT_GT(linted, ranked.front().first);
  for (size_t i = 1; i < top.size(); ++i) EXPECT_GT(linted, t.predict(p, top[i], h100(), clean()).ms);
  EXPECT_EQ(t.predict(p, top.front(), h100(), KernelDefects{}).ms, t.predict_ms(p, top.front(), h100()));
  RecordProperty("tied_at_the_top", static_cast<int>(top.size()));
}

std::string fixture(const std::string& name) {
  std::ifstream in(::mgpu::testing::test_data_path("sass/" + name), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// From real machine code: nvJitLink's listing of the default kernel (setmaxnreg dropped) is
// predicted slower than ptxas's (kept); the ptxas log of the template before the scale-d fix
// (waits injected in the first k-step) is serialised MMAs in the first step only.
TEST(LintPenalties, DefectsFromTheSassFixtures) {
  core::KernelEvidence kept{core::profile_sass(fixture("sm90a_default_ptxas.sass")), {}, 0, true, {}};
  core::KernelEvidence dropped{core::profile_sass(fixture("sm90a_default_nvjitlink.sass")),
                               core::assembler_advisories(fixture("sm90a_default_nvjitlink.log")), 0, true, {}};
  core::KernelEvidence injected{core::profile_sass(fixture("sm90a_default_ptxas.sass")),
                                core::assembler_advisories(fixture("sm90a_zeroed_accumulators_ptxas.log")), 0, true, {}};
  KernelDefects k = defects_of(kept), d = defects_of(dropped), s = defects_of(injected);
  EXPECT_TRUE(k.known);
  EXPECT_FALSE(k.any());
  EXPECT_TRUE(d.setmaxnreg_dropped);
  EXPECT_EQ(s.serialised_mma, KernelDefects::Serialised::FirstStep);
  injected.sass.main_loop.warpgroup_sync = 16;
  injected.ptx_main_loop_warpgroup_sync = 2;  // judged against the PTX's k-step
  EXPECT_EQ(defects_of(injected).serialised_mma, KernelDefects::Serialised::EveryStep);
  core::KernelEvidence banks = kept;
  banks.bank_conflicts = core::SharedBankConflicts{3584, 512, 4096, 512};
  EXPECT_DOUBLE_EQ(defects_of(banks).epilogue_bank_ways, 8.0);

  const sm90::MatmulConfig c;
  const MatmulProblem p = cube(4096);
  EXPECT_GT(sm90::predict(p, c, h100(), d).ms, sm90::predict(p, c, h100(), k).ms);
  EXPECT_GT(sm90::predict(p, c, h100(), s).ms, sm90::predict(p, c, h100(), k).ms);
}

// The H100 measured the 2-CTA cluster along M with the .release.cluster remote arrive at 1.53x
// (ncu) and 1.57x (bench) the time of the same kernel with the relaxed arrive. Given the two
// kernels' SASS, the model must tell them apart by about that much.
TEST(LintPenalties, TheReleaseArriveKernelIsPredictedAsSlowAsTheH100MeasuredIt) {
  core::KernelEvidence release{core::profile_sass(fixture("sm90a_clusterM_release_arrive_ptxas.sass")), {}, 0, true, {}};
  core::KernelEvidence relaxed{core::profile_sass(fixture("sm90a_clusterM_relaxed_arrive_ptxas.sass")), {}, 0, true, {}};
  EXPECT_EQ(defects_of(release).main_loop_membars, 1);
  EXPECT_FALSE(defects_of(relaxed).any());
  sm90::MatmulConfig m;
  m.cluster_dimension = sm90::ClusterDim::M;
  const MatmulProblem p = cube(4096);
  const Prediction slow = sm90::predict(p, m, h100(), defects_of(release));
  const double ratio = slow.ms / sm90::predict(p, m, h100(), defects_of(relaxed)).ms;
  EXPECT_GT(ratio, 1.4);
  EXPECT_LT(ratio, 1.7);
  ASSERT_EQ(slow.lint_penalties.size(), 1u);
  EXPECT_EQ(slow.lint_penalties[0].code, "membar-in-main-loop");
}

}  // namespace
}  // namespace mgpu::kernels
