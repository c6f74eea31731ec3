// kernels/matmul_common/launch_math.h: the launch arithmetic an exported pack runs in C is the
// templates' own. For sampled configs of both matmul templates' spaces at ragged, decode and
// K-heavy problems on several SM counts: the C build of the header gives the templates' grid,
// scalar arguments and workspace; the walk the consts describe is the kernel's (walk_shape);
// that walk, over the grid, computes every k-step of every output tile exactly once; and every
// partial it leaves has a slot inside the workspace, within the bound.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "kernels/matmul_common/launch_math.h"
#include "kernels/matmul_common/tile_walk.h"
#include "kernels/matmul_sm100/config.h"
#include "kernels/matmul_sm100/kernel.h"
#include "kernels/matmul_sm100/template.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/kernel.h"
#include "kernels/matmul_sm90/template.h"
#include "tests/support/launch_math_c.h"

namespace mgpu::kernels {
namespace {

const std::vector<MatmulProblem> kProblems = {
    {.m = 1000, .n = 520, .k = 64},           // ragged in M and N
    {.m = 8, .n = 1024, .k = 14336},          // decode, K-heavy
    {.m = 200, .n = 304, .k = 4096, .b_layout = BLayout::NK},
    {.m = 64, .n = 64, .k = 8},               // one tile, one short k-step
};
const int kSmCounts[] = {1, 7, 132};

TileWalkShape walk_of(const mgpu_lm_matmul& l, const MatmulProblem& p) {
  return {l.cta_tile_m,
          l.cta_tile_n,
          l.cluster_m,
          l.cluster_n,
          mgpu_lm_effective_split_k(&l, p.m, p.n, p.k),
          l.schedule == MGPU_LM_STREAM_K,
          mgpu_lm_k_steps(&l, p.k)};
}

bool same_walk(const TileWalkShape& a, const TileWalkShape& b) {
  return std::tie(a.cta_tile_m, a.cta_tile_n, a.cluster_m, a.cluster_n, a.splits, a.stream) ==
         std::tie(b.cta_tile_m, b.cta_tile_n, b.cluster_m, b.cluster_n, b.splits, b.stream);
}

// Checks one (problem, config) on `sms` SMs; returns false after the first failure.
bool check_launch(const MatmulTemplate& t, const MatmulProblem& p, const core::TuningConfig& c, int sms,
                  const TileWalkShape& kernel_walk) {
  const mgpu_lm_matmul l = t.launch_consts(c);
  const std::string what = c.to_json() + " at " + p.key() + " on " + std::to_string(sms) + " SMs";
  // The C build is the C++ build.
  const unsigned grid = t.grid(p, c, sms);
  EXPECT_EQ(mgpu_lm_c_grid(&l, p.m, p.n, p.k, sms), grid) << what;
  const std::int64_t workspace = t.workspace_bytes(p, c, sms);
  EXPECT_EQ(mgpu_lm_c_workspace_bytes(&l, p.m, p.n, p.k, sms), workspace) << what;
  std::int32_t c_args[MGPU_LM_MAX_SCALARS];
  const int count = mgpu_lm_c_scalar_args(&l, p.m, p.n, p.k, c_args);
  EXPECT_EQ(std::vector<std::int32_t>(c_args, c_args + count), t.scalar_args(p, c)) << what;
  // The consts describe the kernel's walk.
  const TileWalkShape s = walk_of(l, p);
  EXPECT_TRUE(same_walk(s, kernel_walk)) << what;
  EXPECT_EQ(grid % unsigned(s.cluster_size()), 0u) << what;
  EXPECT_LE(workspace, l.schedule == MGPU_LM_DATA_PARALLEL ? 0 : l.max_workspace_bytes) << what;
  // The walk over the grid: every k-step of every tile once, every slot inside the workspace.
  const mgpu_lm_workspace w = mgpu_lm_workspace_of(&l, p.m, p.n, p.k, sms);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> steps;
  for (unsigned b = 0; b < grid; ++b)
    for (const HostUnit& u : host_tile_walk(s, p.m, p.n, b, grid, l.minor_is_n == 1, l.grid_tile_width)) {
      std::vector<int>& seen = steps[{u.m0, u.n0}];
      seen.resize(std::size_t(s.k_steps), 0);
      for (std::int64_t k = u.k_first; k < u.k_first + u.k_count; ++k) ++seen[std::size_t(k)];
      if (u.segments > 1) {
        EXPECT_LT(u.slot, w.slots) << what;
        EXPECT_LT(u.tile, w.tiles) << what;
      }
    }
  const std::int64_t tiles_m = (p.m + std::int64_t(s.cta_tile_m) * s.cluster_m - 1) / (std::int64_t(s.cta_tile_m) * s.cluster_m);
  const std::int64_t tiles_n = (p.n + std::int64_t(s.cta_tile_n) * s.cluster_n - 1) / (std::int64_t(s.cta_tile_n) * s.cluster_n);
  EXPECT_EQ(std::int64_t(steps.size()), tiles_m * tiles_n * s.cluster_size()) << what;
  for (const auto& [tile, seen] : steps)
    for (int times : seen)
      if (times != 1) {
        ADD_FAILURE() << what << ": a k-step of tile (" << tile.first << ", " << tile.second << ") computed " << times
                      << " times";
        return false;
      }
  return !::testing::Test::HasFailure();
}

// Every `stride`-th config of the space that is valid at the problem.
template <class WalkOf>
int check_space(const MatmulTemplate& t, std::uint64_t stride, WalkOf kernel_walk) {
  int checked = 0;
  for (const MatmulProblem& p : kProblems) {
    std::uint64_t index = 0;
    bool ok = true;
    t.space().enumerate([&](const core::TuningConfig& c) {
      if (!ok || index++ % stride != 0 || t.why_invalid(p, c)) return;
      for (int sms : kSmCounts) ok = ok && check_launch(t, p, c, sms, kernel_walk(p, c));
      ++checked;
    });
    if (!ok) break;
  }
  return checked;
}

TEST(LaunchMath, HopperSpaceLaunchesCoverEveryStepOnceFromTheCBuild) {
  const MatmulTemplate& t = sm90::hopper_matmul();
  const int checked = check_space(t, t.space().size() / 6000 + 1, [](const MatmulProblem& p, const core::TuningConfig& c) {
    return sm90::walk_shape(p, sm90::MatmulConfig::from_tuning_config(c));
  });
  EXPECT_GT(checked, 300);
}

TEST(LaunchMath, BlackwellSpaceLaunchesCoverEveryStepOnceFromTheCBuild) {
  const MatmulTemplate& t = sm100::blackwell_matmul();
  const int checked = check_space(t, t.space().size() / 1500 + 1, [](const MatmulProblem&, const core::TuningConfig& c) {
    return sm100::walk_shape(sm100::MatmulConfig::from_tuning_config(c));
  });
  EXPECT_GT(checked, 100);
}

TEST(LaunchMath, EverySplitAndStreamScheduleIsChecked) {
  // The sample above must reach the schedules that take a workspace: count them directly.
  const MatmulTemplate& t = sm90::hopper_matmul();
  int split = 0, stream = 0;
  const MatmulProblem p = kProblems[1];
  std::atomic<bool> enough{false};
  t.space().enumerate([&](const core::TuningConfig& c) {
    enough = split >= 40 && stream >= 40;
    if (t.why_invalid(p, c)) return;
    const mgpu_lm_matmul l = t.launch_consts(c);
    if ((l.schedule == MGPU_LM_SPLIT_K && split++ < 40) || (l.schedule == MGPU_LM_STREAM_K && stream++ < 40)) {
      for (int sms : kSmCounts)
        ASSERT_TRUE(check_launch(t, p, c, sms, sm90::walk_shape(p, sm90::MatmulConfig::from_tuning_config(c))));
    }
  }, &enough);
  EXPECT_GT(split, 0);
  EXPECT_GT(stream, 0);
}

TEST(LaunchMath, SplitCountIsHeldToTheKStepsAndTheWorkspaceBound) {
  mgpu_lm_matmul l{};
  l.cta_tile_m = 128;
  l.cta_tile_n = 128;
  l.cluster_m = l.cluster_n = 1;
  l.tile_k = 64;
  l.schedule = MGPU_LM_SPLIT_K;
  l.split_k = 8;
  l.counters_per_tile = 2;
  l.max_workspace_bytes = 32LL << 20;
  EXPECT_EQ(mgpu_lm_effective_split_k(&l, 128, 128, 128), 2);   // two k-steps
  EXPECT_EQ(mgpu_lm_effective_split_k(&l, 128, 128, 8192), 8);
  // 32 x 32 tiles of 64 KiB partials: two per tile are 128 MiB, over the bound, so the launch
  // does not split, and a tile's only unit needs no partial slot: the counters alone.
  EXPECT_EQ(mgpu_lm_effective_split_k(&l, 4096, 4096, 8192), 1);
  EXPECT_EQ(mgpu_lm_workspace_bytes(&l, 4096, 4096, 8192, 132), 1024 * 2 * 4);
  // 4 x 4 tiles: eight ranges each are 8 MiB of partials.
  EXPECT_EQ(mgpu_lm_workspace_bytes(&l, 512, 512, 8192, 132), 256 + 16LL * 8 * 65536);
  // 2^31-wide: the workspace's arithmetic does not overflow, the launch does not split.
  EXPECT_EQ(mgpu_lm_effective_split_k(&l, 2147483647, 2147483647, 8192), 1);
  int32_t args[MGPU_LM_MAX_SCALARS];
  EXPECT_EQ(mgpu_lm_scalar_args(&l, 128, 128, 8192, args), 6);
  EXPECT_EQ(args[5], 8);
  l.schedule = MGPU_LM_DATA_PARALLEL;
  EXPECT_EQ(mgpu_lm_scalar_args(&l, 128, 128, 8192, args), 5);
  EXPECT_EQ(mgpu_lm_workspace_bytes(&l, 128, 128, 8192, 132), 0);
}

}  // namespace
}  // namespace mgpu::kernels
