// The Hopper matmul template without a GPU: the tile schedule covers every output tile exactly
// once (the kernel's own index builder, JIT-run on the CPU), the validity rules agree with the
// compiler, and every valid config of the default space compiles for sm_90a with the
// instructions meant.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "core/compile_pool.h"
#include "core/compiler.h"
#include "core/error.h"
#include "core/sass/nvdisasm.h"
#include "core/sass/performance_lints.h"
#include "core/sass/ptx_main_loop.h"
#include "core/sass/sass_profile.h"
#include "kernels/matmul_common/operand_tma.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/cost_model.h"
#include "kernels/matmul_sm90/kernel.h"
#include "kernels/matmul_sm90/template.h"
#include "kernels/matmul_sm90/validity.h"
#include "tests/support/compile_space.h"
#include "tests/support/space_sass.h"
#include "tests/support/jit_schedule.h"
#include "tests/support/jit_tile_walk.h"
#include "tests/support/matmul_cases.h"

namespace mgpu::kernels::sm90 {
namespace {

const core::ArchSpec& hopper() { return core::parse_arch("sm_90a"); }

TEST(TileSchedule, PlanarSnakeVisitsEveryTileExactlyOnce) {
  ::mgpu::testing::JitSchedule schedule;
  int grids = 0;
  for (int m_tiles : {1, 2, 3, 7, 16, 33})
    for (int n_tiles : {1, 4, 5, 12, 31})
      for (int minor_is_n : {0, 1})
        for (int width : {1, 2, 3, 4, 8, 16, 40}) {
          std::set<std::pair<int, int>> seen;
          for (int t = 0; t < m_tiles * n_tiles; ++t) {
            auto [m, n] = schedule(t, m_tiles, n_tiles, minor_is_n, width);
            ASSERT_GE(m, 0);
            ASSERT_LT(m, m_tiles) << "t=" << t << " grid " << m_tiles << "x" << n_tiles << " w=" << width;
            ASSERT_GE(n, 0);
            ASSERT_LT(n, n_tiles) << "t=" << t << " grid " << m_tiles << "x" << n_tiles << " w=" << width;
            ASSERT_TRUE(seen.insert({m, n}).second) << "tile (" << m << "," << n << ") visited twice";
          }
          ASSERT_EQ(seen.size(), size_t(m_tiles * n_tiles));
          ++grids;
        }
  EXPECT_EQ(grids, 6 * 5 * 2 * 7);
}

TEST(TileSchedule, ConsecutiveTilesStayInABand) {
  // With minor dimension N and width 4, the first 4 tiles share row 0 and the next 4 row 1,
  // walked back (the snake), so neighbours in time are neighbours in the grid.
  ::mgpu::testing::JitSchedule schedule;
  std::vector<std::pair<int, int>> order;
  for (int t = 0; t < 8; ++t) order.push_back(schedule(t, 8, 8, 1, 4));
  std::vector<std::pair<int, int>> expected = {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 2}, {1, 1}, {1, 0}};
  EXPECT_EQ(order, expected);
}

TEST(TileSchedule, TheHostWalkIsTheEmittedWalk) {
  // kernels::host_tile_walk() decides which configs run the same work (verification by
  // equivalence), so it must be the kernel's own walk, CTA by CTA, tile by tile.
  int ctas = 0;
  TileWalkShape stream{64, 128, 1, 1, 1, true};
  for (TileWalkShape s : {TileWalkShape{256, 128, 1, 1}, TileWalkShape{16, 128, 1, 2}, TileWalkShape{128, 64, 2, 1},
                          TileWalkShape{64, 256, 1, 1}, TileWalkShape{16, 256, 1, 1, 3}, TileWalkShape{128, 128, 1, 1, 8},
                          stream}) {
    ::mgpu::testing::JitTileWalk walk(s);
    for (int m : {1, 16, 130, 1000})
      for (int n : {8, 500, 2048})
        for (int k_steps : {3, 64})
          for (int sms : {132, 7, 2})
            for (int minor : {0, 1})
              for (int width : {1, 3, 16}) {
                s.k_steps = k_steps;
                const unsigned grid = kernels::persistent_grid(m, n, s, sms);
                for (unsigned b = 0; b < grid; ++b) {
                  ::mgpu::testing::WalkArgs a{m,     n,     static_cast<int>(b), static_cast<int>(grid),
                                              static_cast<int>(b % s.cluster_size()), minor, width,
                                              s.splits, k_steps};
                  auto host = kernels::host_tile_walk(s, m, n, b, grid, minor == 1, width);
                  ASSERT_EQ(host.size(), size_t(walk.count(a))) << m << "x" << n << " block " << b << " of " << grid;
                  for (size_t it = 0; it < host.size(); ++it) {
                    const kernels::HostUnit u = walk.unit(a, static_cast<int>(it));
                    const kernels::HostUnit& h = host[it];
                    ASSERT_EQ(std::tie(h.m0, h.n0, h.split, h.k_first, h.k_count, h.segments, h.tile),
                              std::tie(u.m0, u.n0, u.split, u.k_first, u.k_count, u.segments, u.tile))
                        << m << "x" << n << " block " << b << " splits " << s.splits << " stream " << s.stream;
                    if (h.segments > 1) ASSERT_EQ(h.slot, u.slot) << m << "x" << n << " block " << b;
                  }
                  ++ctas;
                }
              }
  }
  EXPECT_GT(ctas, 10000);
}

TEST(TileSchedule, TheLaunchSignatureTellsWhichTileOrdersRunTheSameWork) {
  // Verification runs one config per signature (harness/verify/verifier.h): configs that differ
  // only in the tile order share it exactly when every cluster computes the same tiles.
  const MatmulTemplate& t = hopper_matmul();
  auto with = [&](const char* minor, int width, const char* cluster) {
    core::TuningConfig c = t.default_config();
    c.set("grid_minor_dim", std::string(minor));
    c.set("grid_tile_width", std::int64_t{width});
    c.set("cluster_dimension", std::string(cluster));
    return c;
  };
  MatmulProblem one_each{.m = 256, .n = 256, .k = 256};  // 2 CTA tiles of 256 x 128 on 132 SMs
  EXPECT_EQ(t.launch_signature(one_each, with("N", 8, "none"), 132), t.launch_signature(one_each, with("M", 1, "none"), 132));
  MatmulProblem several{.m = 1024, .n = 1024, .k = 256};  // 32 tiles on 3 SMs: 11, 11 and 10 each
  EXPECT_NE(t.launch_signature(several, with("N", 2, "none"), 3), t.launch_signature(several, with("M", 2, "none"), 3));
  // One band as wide as the 8 tile columns, snaking down the rows, is the width-1 bands along M.
  EXPECT_EQ(t.launch_signature(several, with("N", 8, "none"), 3), t.launch_signature(several, with("M", 1, "none"), 3));
  EXPECT_NE(t.launch_signature(several, with("N", 1, "none"), 3), t.launch_signature(several, with("N", 2, "none"), 3));
  EXPECT_EQ(t.launch_signature(several, with("N", 4, "none"), 3), t.launch_signature(several, with("N", 4, "none"), 3));
  // A cluster's two CTAs walk together: the pair's sequences are one unit of the signature.
  EXPECT_NE(t.launch_signature(one_each, with("N", 8, "M"), 132), t.launch_signature(one_each, with("N", 8, "none"), 132));
  EXPECT_NE(t.launch_signature(several, with("N", 8, "N"), 4), t.launch_signature(several, with("M", 8, "N"), 4));
}

TEST(MatmulConfig, RoundTripsThroughTuningConfigJson) {
  MatmulConfig c;
  c.tile_n = 64;
  c.cluster_dimension = ClusterDim::N;
  c.grid_minor_dim = Dim::M;
  core::TuningConfig t = core::TuningConfig::from_json(c.to_tuning_config().to_json());
  MatmulConfig back = MatmulConfig::from_tuning_config(t);
  EXPECT_EQ(back.to_tuning_config(), c.to_tuning_config());
  EXPECT_NO_THROW(default_space().check_member(t));
  EXPECT_THROW(MatmulConfig::from_tuning_config(core::TuningConfig::from_json(R"({"tile_m": 128})")), core::Error);
  EXPECT_THROW(MatmulConfig::from_tuning_config(core::TuningConfig::from_json(
                   R"({"tile_m":128,"tile_n":128,"tile_k":64,"max_concurrent_steps":4,"epi_tile_m":64,
                       "epi_tile_n":64,"grid_minor_dim":"K","grid_tile_width":8,"wg_dimension":"M",
                       "cluster_dimension":"none"})")),
               core::Error);
}

TEST(MatmulConfig, SwapAbRoundTripsAndConfigsStoredBeforeItRanUnswapped) {
  MatmulConfig c;
  c.swap_ab = true;
  c.tile_m = 16;
  c.tile_n = 64;
  MatmulConfig back = MatmulConfig::from_tuning_config(core::TuningConfig::from_json(c.to_tuning_config().to_json()));
  EXPECT_TRUE(back.swap_ab);
  EXPECT_EQ(back.to_tuning_config(), c.to_tuning_config());
  EXPECT_EQ(back.mma_rows(), 64);  // wgmma's M is C's columns, its N C's rows
  EXPECT_EQ(back.mma_n(), 16);
  EXPECT_EQ(back.epi_rows(), 16);
  // A config stored before swap_ab existed names every other parameter: it ran unswapped.
  MatmulConfig old = MatmulConfig::from_tuning_config(core::TuningConfig::from_json(
      R"({"tile_m":128,"tile_n":128,"tile_k":64,"max_concurrent_steps":4,"epi_tile_m":64,"epi_tile_n":64,
          "grid_minor_dim":"N","grid_tile_width":8,"wg_dimension":"M","cluster_dimension":"none"})"));
  EXPECT_FALSE(old.swap_ab);
  EXPECT_EQ(old.to_tuning_config(), MatmulConfig{}.to_tuning_config());
  core::TuningConfig bad = c.to_tuning_config();
  bad.set("swap_ab", std::string("maybe"));
  try {
    MatmulConfig::from_tuning_config(bad);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find(R"(swap_ab must be "no" or "yes", got "maybe")"), std::string::npos) << e.what();
  }
}

TEST(MatmulSm90Validity, SwapAbRulesWithTheirReasons) {
  MatmulProblem p{.m = 16, .n = 4096, .k = 4096, .b_layout = BLayout::NK};
  auto rule = [&](MatmulConfig c) {
    auto r = why_invalid(p, c, hopper());
    return r ? r->rule + ": " + r->reason : std::string("valid");
  };
  MatmulConfig s;
  s.swap_ab = true;
  s.tile_n = 64;
  for (int m : {8, 16, 24, 32, 64}) {
    s.tile_m = m;
    EXPECT_EQ(rule(s), "valid") << m;
  }
  s.tile_m = 128;
  EXPECT_NE(rule(s).find("swap_ab: tile_m 128 is not a multiple of 8 in [8, 64]"), std::string::npos) << rule(s);
  s.tile_m = 12;
  EXPECT_NE(rule(s).find("swap_ab: tile_m 12"), std::string::npos) << rule(s);
  s.tile_m = 16;
  s.tile_n = 96;  // fine as wgmma's N, not as its M
  EXPECT_NE(rule(s).find("swap_ab: tile_n 96 is not 64, 128, 192 or 256"), std::string::npos) << rule(s);
  s.tile_n = 64;
  s.epi_tile_m = 128;
  EXPECT_NE(rule(s).find("swap_ab: epi_tile_m 128 must stay 64"), std::string::npos) << rule(s);
  MatmulConfig u;  // unswapped, a small tile_m is no wgmma M
  u.tile_m = 16;
  EXPECT_NE(rule(u).find("shape: tile_m 16 is not 64, 128, 192 or 256"), std::string::npos) << rule(u);
  EXPECT_NE(rule(u).find("swap_ab \"yes\" takes 8..64"), std::string::npos) << rule(u);
  // The SMEM the swapped kernel needs: A's stage is tile_m rows, the epilogue tile_m-row pieces.
  s.epi_tile_m = 64;
  s.max_concurrent_steps = 8;
  s.tile_k = 128;
  s.tile_n = 256;
  s.wg_dimension = Dim::N;  // B stages of 512 rows x 256 bytes: 8 x 144 KiB do not fit
  EXPECT_NE(rule(s).find("smem: needs"), std::string::npos) << rule(s);
}

TEST(MatmulConfig, SplitKRoundTripsAndConfigsStoredBeforeItWereDataParallel) {
  MatmulConfig c;
  c.schedule = Schedule::SplitK;
  c.split_k = 3;
  MatmulConfig back = MatmulConfig::from_tuning_config(core::TuningConfig::from_json(c.to_tuning_config().to_json()));
  EXPECT_EQ(back.schedule, Schedule::SplitK);
  EXPECT_EQ(back.split_k, 3);
  MatmulConfig old = MatmulConfig::from_tuning_config(core::TuningConfig::from_json(
      R"({"tile_m":128,"tile_n":128,"tile_k":64,"max_concurrent_steps":4,"epi_tile_m":64,"epi_tile_n":64,
          "grid_minor_dim":"N","grid_tile_width":8,"wg_dimension":"M","cluster_dimension":"none","swap_ab":"no"})"));
  EXPECT_EQ(old.schedule, Schedule::DataParallel);
  EXPECT_EQ(old.split_k, 1);
  core::TuningConfig bad = c.to_tuning_config();
  bad.set("schedule", std::string("stream"));
  EXPECT_THROW(MatmulConfig::from_tuning_config(bad), core::Error);
}

TEST(MatmulSm90Validity, SplitKRulesWithTheirReasons) {
  MatmulProblem p{.m = 1, .n = 4096, .k = 14336, .b_layout = BLayout::NK};  // a decode down projection
  auto rule = [&](MatmulConfig c) {
    auto r = why_invalid(p, c, hopper());
    return r ? r->rule + ": " + r->reason : std::string("valid");
  };
  MatmulConfig s;
  s.swap_ab = true;
  s.tile_m = 16;
  s.tile_n = 64;
  s.schedule = Schedule::SplitK;
  for (int k : {2, 3, 4, 6, 8}) {
    s.split_k = k;
    EXPECT_EQ(rule(s), "valid") << k;
  }
  s.split_k = 1;
  EXPECT_NE(rule(s).find("split_k: split_k 1 is not in [2, 64]"), std::string::npos) << rule(s);
  MatmulConfig d;  // data_parallel with a split count
  d.split_k = 4;
  EXPECT_NE(rule(d).find("split_k: split_k 4 needs schedule \"split_k\""), std::string::npos) << rule(d);
  s.split_k = 2;
  s.cluster_dimension = ClusterDim::N;
  EXPECT_NE(rule(s).find("split_k: a 2-CTA cluster multicasts"), std::string::npos) << rule(s);
  s.cluster_dimension = ClusterDim::None;
  MatmulProblem short_k{.m = 1, .n = 4096, .k = 200};  // 4 k-steps of 64
  s.split_k = 4;
  EXPECT_EQ(why_invalid(short_k, s, hopper()), std::nullopt);
  s.split_k = 6;
  auto r = why_invalid(short_k, s, hopper());
  ASSERT_TRUE(r);
  EXPECT_NE(r->reason.find("split_k 6 exceeds the 4 k-steps of K 200 at tile_k 64"), std::string::npos) << r->reason;
  // The workspace: 8 x 4096 rows x 4096 columns of f32 partials is 512 MiB, over the 32 MiB bound.
  MatmulConfig big;
  big.tile_m = 64;
  big.schedule = Schedule::SplitK;
  big.split_k = 8;
  r = why_invalid(MatmulProblem{.m = 4096, .n = 4096, .k = 4096}, big, hopper());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rule, "split_k");
  EXPECT_NE(r->reason.find("bytes of workspace"), std::string::npos) << r->reason;
  // A tile whose sums do not fit beside the partial loads (128 x 128: 128 registers).
  MatmulConfig wide;
  wide.schedule = Schedule::SplitK;
  wide.split_k = 2;
  r = why_invalid(MatmulProblem{.m = 256, .n = 256, .k = 4096}, wide, hopper());
  ASSERT_TRUE(r);
  EXPECT_NE(r->reason.find("128 registers per thread"), std::string::npos) << r->reason;
  wide.tile_m = 64;
  wide.tile_n = 192;  // 96 registers: spilled
  EXPECT_NE(rule(wide).find("96 registers per thread"), std::string::npos) << rule(wide);
  wide.tile_n = 128;  // 64: the largest split tile
  EXPECT_EQ(why_invalid(MatmulProblem{.m = 256, .n = 256, .k = 4096}, wide, hopper()), std::nullopt);
}

TEST(MatmulSm90Validity, StreamKRulesWithTheirReasons) {
  MatmulProblem p{.m = 1, .n = 4096, .k = 14336, .b_layout = BLayout::NK};
  auto rule = [&](MatmulConfig c) {
    auto r = why_invalid(p, c, hopper());
    return r ? r->rule + ": " + r->reason : std::string("valid");
  };
  MatmulConfig s;
  s.swap_ab = true;
  s.tile_m = 16;
  s.tile_n = 64;
  s.schedule = Schedule::StreamK;
  EXPECT_EQ(rule(s), "valid");
  s.split_k = 4;  // stream-K decides the shares itself
  EXPECT_NE(rule(s).find("split_k: split_k 4 needs schedule \"split_k\" (stream_k decides"), std::string::npos) << rule(s);
  s.split_k = 1;
  s.cluster_dimension = ClusterDim::M;
  EXPECT_NE(rule(s).find("stream_k: a 2-CTA cluster multicasts"), std::string::npos) << rule(s);
  s.cluster_dimension = ClusterDim::None;
  MatmulConfig wide;  // 128 x 128 per warpgroup: 128 registers of sums
  wide.schedule = Schedule::StreamK;
  EXPECT_NE(rule(wide).find("stream_k: a 128x128 tile's sums (128 registers per thread)"), std::string::npos) << rule(wide);
  // Any K is fine, a single k-step included (then every unit is a whole tile).
  EXPECT_EQ(why_invalid(MatmulProblem{.m = 1, .n = 4096, .k = 64}, s, hopper()), std::nullopt);
  // The counters alone would overfill the workspace: 2^23 tiles of 16 x 128, 64 MiB of counters.
  MatmulProblem huge{.m = 65536, .n = 262144, .k = 64, .b_layout = BLayout::NK};
  auto r = why_invalid(huge, s, hopper());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rule, "stream_k");
  EXPECT_NE(r->reason.find("arrival counters"), std::string::npos) << r->reason;
}

TEST(MatmulSm90Validity, PingPongRulesWithTheirReasons) {
  MatmulProblem p{.m = 4096, .n = 4096, .k = 4096};
  auto rule = [&](MatmulConfig c) {
    auto r = why_invalid(p, c, hopper());
    return r ? r->rule + ": " + r->reason : std::string("valid");
  };
  MatmulConfig pp;
  pp.consumers = Consumers::PingPong;  // 128 x 128 per warpgroup, which is the CTA tile
  EXPECT_EQ(rule(pp), "valid");
  EXPECT_EQ(pp.cta_tile_m(), 128);
  EXPECT_EQ(pp.cta_tile_n(), 128);
  EXPECT_FALSE(overlaps_epilogue(pp));  // the other warpgroup's MMAs hide the epilogue instead
  pp.wg_dimension = Dim::N;
  EXPECT_NE(rule(pp).find("consumers: wg_dimension says how cooperating warpgroups split"), std::string::npos) << rule(pp);
  pp.wg_dimension = Dim::M;
  pp.tile_m = 64;
  pp.schedule = Schedule::StreamK;
  EXPECT_NE(rule(pp).find("consumers: stream_k's partial tiles are kept per cooperating warpgroup"), std::string::npos)
      << rule(pp);
  EXPECT_THROW(build_matmul_unchecked(p, pp), core::Error);  // not a faulty kernel: none at all
  // A 256 x 256 accumulator is 512 registers per thread either way.
  MatmulConfig big;
  big.consumers = Consumers::PingPong;
  big.tile_m = 256;
  big.tile_n = 256;
  big.max_concurrent_steps = 2;  // two 64 KiB stages fit the SMEM
  EXPECT_EQ(why_invalid(p, big, hopper())->rule, "registers");
  // Configs stored before the knob cooperated; the name round-trips.
  core::TuningConfig old = MatmulConfig{}.to_tuning_config();
  EXPECT_EQ(old.get_str("consumers"), "cooperative");
  core::TuningConfig t = pp.to_tuning_config();
  EXPECT_EQ(MatmulConfig::from_tuning_config(t).consumers, Consumers::PingPong);
  t.set("consumers", std::string("both"));
  EXPECT_THROW(MatmulConfig::from_tuning_config(t), core::Error);
}

TEST(MatmulSm90, TheSplitKWorkspaceIsCountersThenPartials) {
  MatmulConfig c;
  c.tile_m = 64;  // CTA tile 128 x 128
  c.schedule = Schedule::SplitK;
  c.split_k = 3;
  const SplitWorkspace w = split_workspace(MatmulProblem{.m = 200, .n = 304, .k = 4096}, c, 132);
  EXPECT_EQ(w.tiles, 2 * 3);
  EXPECT_EQ(w.counter_bytes, 256);  // 6 tiles x 2 warpgroups x 4 bytes, rounded up
  EXPECT_EQ(w.partial_bytes, 6LL * 3 * 128 * 128 * 4);
  EXPECT_EQ(hopper_matmul().workspace_bytes(MatmulProblem{.m = 200, .n = 304, .k = 4096}, c.to_tuning_config(), 132),
            w.total());
  EXPECT_EQ(
      hopper_matmul().workspace_bytes(MatmulProblem{.m = 200, .n = 304, .k = 4096}, MatmulConfig{}.to_tuning_config(), 132),
      0);
  // The split count is a kernel argument, after the tile order's.
  EXPECT_EQ(hopper_matmul().scalar_args(MatmulProblem{.m = 200, .n = 304, .k = 4096}, c.to_tuning_config()).back(), 3);
  EXPECT_TRUE(build_matmul(MatmulProblem{.m = 200, .n = 304, .k = 4096}, c, hopper()).takes_workspace);
}

TEST(MatmulSm90, StreamKHasOneCtaPerSmAndTwoSlotsPerCta) {
  MatmulConfig c;
  c.tile_m = 64;  // CTA tile 128 x 128
  c.schedule = Schedule::StreamK;
  const MatmulProblem p{.m = 200, .n = 304, .k = 4096};  // 6 tiles x 64 k-steps
  // One CTA per SM, held to the iterations and to what the workspace holds.
  EXPECT_EQ(stream_k_grid(p, c, 132), 132u);
  EXPECT_EQ(stream_k_grid(MatmulProblem{.m = 200, .n = 304, .k = 128}, c, 132), 12u);  // 6 tiles x 2 k-steps
  const SplitWorkspace w = split_workspace(p, c, 132);
  EXPECT_EQ(w.counter_bytes, 256);
  EXPECT_EQ(w.slots, 2 * 132);
  EXPECT_EQ(w.partial_bytes, 2LL * 132 * 128 * 128 * 4);
  EXPECT_EQ(hopper_matmul().workspace_bytes(p, c.to_tuning_config(), 132), w.total());
  EXPECT_EQ(hopper_matmul().grid(p, c.to_tuning_config(), 132), 132u);
  EXPECT_EQ(hopper_matmul().scalar_args(p, c.to_tuning_config()).size(), 5u);  // no split count
  EXPECT_TRUE(build_matmul(p, c, hopper()).takes_workspace);
  // Two 128 x 128 f32 slots are 128 KiB per CTA: 32 MiB holds 255 CTAs' beside the counters,
  // more than any Hopper part has SMs; a larger grid is capped there.
  EXPECT_EQ(stream_k_grid(p, c, 1000), unsigned((kMaxWorkspaceBytes - 256) / (2 * 128 * 128 * 4)));
}

TEST(TileSchedule, StreamUnitsCoverEveryTileStepOnceInEqualShares) {
  // Every (tile, k-step) is computed exactly once; CTAs' shares differ by at most one k-step; a
  // tile's segments are consecutive CTAs numbered 0..n-1 in CTA order, and the slots its shared
  // segments write are distinct across the whole launch.
  for (int k_steps : {1, 5, 64})
    for (int sms : {1, 2, 7, 132}) {
      TileWalkShape s{128, 64, 1, 1, 1, true, k_steps};
      const int m = 300, n = 200;  // 3 x 4 tiles
      const unsigned grid = kernels::persistent_grid(m, n, s, sms);
      EXPECT_EQ(grid, unsigned(std::min(sms, 12 * k_steps)));
      std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> steps;  // tile -> owner per k-step
      std::map<std::int64_t, int> slot_writers;
      std::int64_t least = 1 << 30, most = 0;
      for (unsigned b = 0; b < grid; ++b) {
        std::int64_t share = 0;
        for (const kernels::HostUnit& u : kernels::host_tile_walk(s, m, n, b, grid, true, 2)) {
          auto& owner = steps[{u.m0, u.n0}];
          owner.resize(k_steps, -1);
          for (std::int64_t k = u.k_first; k < u.k_first + u.k_count; ++k) {
            ASSERT_EQ(owner[k], -1) << "k-step computed twice";
            owner[k] = int(b);
          }
          share += u.k_count;
          if (u.segments > 1) ++slot_writers[u.slot];
        }
        least = std::min(least, share);
        most = std::max(most, share);
      }
      EXPECT_EQ(steps.size(), 12u);
      for (auto& [tile, owner] : steps) {
        for (int k = 0; k < k_steps; ++k) ASSERT_NE(owner[k], -1);
        EXPECT_TRUE(std::is_sorted(owner.begin(), owner.end()));
      }
      EXPECT_LE(most - least, 1);
      for (auto& [slot, writers] : slot_writers) EXPECT_EQ(writers, 1) << "slot " << slot;
    }
}

TEST(TileSchedule, SplitUnitsCoverEveryTileAndRangeOnce) {
  // Every (tile, range) is some CTA's unit exactly once, for grids smaller and larger than the
  // unit count; a tile's ranges are consecutive units.
  for (int splits : {2, 3, 8})
    for (int sms : {1, 5, 132}) {
      TileWalkShape s{128, 64, 1, 1, splits};
      const int m = 300, n = 200;
      const unsigned grid = kernels::persistent_grid(m, n, s, sms);
      std::map<std::tuple<std::int64_t, std::int64_t, int>, int> seen;
      for (unsigned b = 0; b < grid; ++b)
        for (const kernels::HostUnit& u : kernels::host_tile_walk(s, m, n, b, grid, true, 2)) ++seen[{u.m0, u.n0, u.split}];
      EXPECT_EQ(seen.size(), size_t(3 * 4 * splits)) << splits << " splits on " << sms;
      for (auto& [unit, times] : seen) EXPECT_EQ(times, 1);
      EXPECT_EQ(grid, unsigned(std::min(sms, 3 * 4 * splits)));
    }
}

TEST(MatmulSm90CostModel, SplitKIsPredictedFasterWhereFewTilesMeetALongK) {
  // M = 16, N = 1024, K = 14336 with 16 x 64 swapped tiles (wg along N): 8 tiles on 132 SMs.
  // Split 8 ways they keep 64 SMs busy on an eighth of K each; at 4096^3 the split only adds
  // partial traffic and fixups.
  const core::DeviceSpec& h100 = hopper().default_device();
  MatmulConfig dp;
  dp.swap_ab = true;
  dp.tile_m = 16;
  dp.tile_n = 64;
  dp.wg_dimension = Dim::N;
  MatmulConfig sk = dp;
  sk.schedule = Schedule::SplitK;
  sk.split_k = 8;
  MatmulProblem decode{.m = 16, .n = 1024, .k = 14336, .b_layout = BLayout::NK};
  EXPECT_LT(predict(decode, sk, h100, {}).ms, 0.5 * predict(decode, dp, h100, {}).ms);
  MatmulConfig big = MatmulConfig{};
  big.tile_m = 64;
  MatmulConfig big_split = big;
  big_split.schedule = Schedule::SplitK;
  big_split.split_k = 2;
  MatmulProblem square{.m = 4096, .n = 4096, .k = 4096};
  EXPECT_GT(predict(square, big_split, h100, {}).ms, predict(square, big, h100, {}).ms);
}

TEST(MatmulSm90CostModel, StreamKIsPredictedFasterWhereTilesLeaveTheLastWaveNearlyEmpty) {
  // 1536 x 1536 in 128 x 128 CTA tiles is 144 tiles on 132 SMs: data-parallel runs two waves,
  // the second with 12 tiles; stream-K gives every SM 144/132 of a tile's k-steps.
  const core::DeviceSpec& h100 = hopper().default_device();
  MatmulConfig dp;
  dp.tile_m = 64;
  MatmulConfig sk = dp;
  sk.schedule = Schedule::StreamK;
  MatmulProblem p{.m = 1536, .n = 1536, .k = 8192};
  EXPECT_LT(predict(p, sk, h100, {}).ms, 0.75 * predict(p, dp, h100, {}).ms);
  // Where the tiles fill whole waves (132 x 4 tiles) there is nothing to balance: the partials
  // and fixups are not charged, and the two are predicted alike.
  MatmulProblem even{.m = 128 * 132, .n = 512, .k = 4096};
  EXPECT_NEAR(predict(even, sk, h100, {}).ms, predict(even, dp, h100, {}).ms, 0.02 * predict(even, dp, h100, {}).ms);
}

TEST(MatmulProblemSupport, UnalignedStridesAreAClearError) {
  MatmulProblem p{.m = 100, .n = 200, .k = 72};  // ragged against tiles: fine
  EXPECT_NO_THROW(check_problem(p));
  p.k = 100;  // 200-byte rows: TMA needs 16-byte multiples
  try {
    check_problem(p);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("multiple of 8"), std::string::npos) << e.what();
  }
}

// The whole default space in nine parts (cooperative data-parallel unswapped; the same with
// swap_ab by tile_m; split_k; pingpong unswapped; stream_k; pingpong swapped: 2,409 pingpong
// kernels took 2,304 s in one part on a loaded machine, past a test's 1,500 s), each a test of its own, so each stays within a test's time limit and two
// run side by side: every valid config of the space is in exactly one part (checked below).
class MatmulSm90Space : public ::testing::TestWithParam<int> {};
constexpr int kSpaceParts = 9;

bool in_part(const MatmulConfig& c, int part) {
  if (part == 8) return c.pingpong() && c.swap_ab;
  if (part == 7) return c.schedule == Schedule::StreamK && !c.pingpong();
  if (part == 6) return c.pingpong() && !c.swap_ab;
  if (part == 5) return c.schedule == Schedule::SplitK && !c.pingpong();
  if (c.schedule != Schedule::DataParallel || c.pingpong()) return false;
  if (part == 0) return !c.swap_ab;
  const int tile_m[] = {8, 16, 32, 64};
  return c.swap_ab && c.tile_m == tile_m[part - 1];
}

// Where a part's configs are valid: the kernels do not depend on M, N and K, but the rules do;
// split-K and stream-K are for few tiles and many k-steps (the workspace is bounded), so their parts are judged
// at a decode-like shape.
MatmulProblem part_problem(int part) {
  return part == 5 || part == 7 ? MatmulProblem{.m = 64, .n = 4096, .k = 8192}
                                 : MatmulProblem{.m = 8192, .n = 8192, .k = 8192};
}

TEST(MatmulSm90, TheSpacePartsCoverTheSpaceOnce) {
  std::uint64_t total = 0, in_one = 0;
  default_space().enumerate([&](const core::TuningConfig& t) {
    ++total;
    MatmulConfig c = MatmulConfig::from_tuning_config(t);
    int parts = 0;
    for (int part = 0; part < kSpaceParts; ++part) parts += in_part(c, part);
    // A config in no part must be one the rules reject (data_parallel or stream_k with a split count).
    if (parts == 0) EXPECT_TRUE(why_invalid(MatmulProblem{}, c, hopper()).has_value()) << t.to_json();
    EXPECT_LE(parts, 1);
    in_one += parts == 1;
  });
  EXPECT_EQ(total, default_space().size());
  EXPECT_GT(in_one, 0u);
}

TEST_P(MatmulSm90Space, EveryValidConfigOfTheDefaultSpaceCompilesWithoutSpillsOrSerialisedMmas) {
  const int part = GetParam();
  const MatmulProblem p = part_problem(part);  // bf16, B as K x N
  std::vector<MatmulConfig> valid;
  std::map<std::string, int> rejected;
  std::uint64_t total = 0;
  default_space().enumerate([&](const core::TuningConfig& t) {
    MatmulConfig c = MatmulConfig::from_tuning_config(t);
    if (!in_part(c, part)) return;
    ++total;
    if (auto r = why_invalid(p, c, hopper())) ++rejected[r->rule];
    else valid.push_back(c);
  });
  ASSERT_FALSE(valid.empty());
  // Configs that differ only in run-time parameters share one kernel: its module is built once.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  std::map<std::string, std::string> module_of_kernel;
  std::map<std::string, const std::string*> text_of;  // config JSON -> its kernel's module text
  for (const MatmulConfig& c : valid) {
    core::TuningConfig kernel = c.to_tuning_config();
    for (const char* run_time : {"grid_minor_dim", "grid_tile_width", "split_k"}) kernel.set(run_time, std::int64_t{0});
    auto [it, fresh] = module_of_kernel.try_emplace(kernel.to_json());
    if (fresh) it->second = build_matmul(p, c, hopper()).mlir;
    text_of[c.to_tuning_config().to_json()] = &it->second;
  }
  std::vector<const std::string*> texts;
  for (const auto& [key, text] : module_of_kernel) texts.push_back(&text);
  const Clock::time_point t1 = Clock::now();
  ASSERT_TRUE(core::find_nvdisasm().has_value()) << "nvdisasm is needed for the SASS checks: run scripts/cuda_tools.sh";
  // Compiled and disassembled in batches (tests/support/space_sass.h: each batch's first kernel
  // checked against the compiler's own build of it alone).
  const std::map<std::string, ::mgpu::testing::KernelProof> proofs = ::mgpu::testing::prove_kernels(texts, hopper());
  const Clock::time_point t2 = Clock::now();
  std::set<const ::mgpu::testing::KernelProof*> sass_checked;
  int ok = 0, alone = 0;
  for (const MatmulConfig& c : valid) {
    const std::string json = c.to_tuning_config().to_json();
    const ::mgpu::testing::KernelProof& k = proofs.at(*text_of.at(json));
    ASSERT_EQ(k.error, "") << json;
    EXPECT_EQ(k.resources.spill_store_bytes, 0) << json;
    // Issue 19: setmaxnreg takes effect (no C7504/C7508 "ignored") and ptxas serialises no
    // wgmma: no warpgroup.arrive/wait injected (C7519/C7517) and no other "Performance Loss".
    EXPECT_EQ(k.log.find("Performance Loss"), std::string::npos) << json << "\n" << k.log;
    EXPECT_EQ(k.log.find("is injected"), std::string::npos) << json << "\n" << k.log;
    // And the machine code agrees (nvdisasm): the register split is there, nothing goes to
    // local memory, and the k-loop holds tile_k/16 MMAs per 64-row block between one fence
    // and one wait. Each distinct kernel once.
    if (sass_checked.insert(&k).second) {
      alone += k.alone;
      const core::SassProfile& sp = k.profile;
      const int blocks = c.mma_blocks();  // 64-row wgmma blocks of each consumer's tile_m x tile_n (or its C^T)
      EXPECT_EQ(sp.whole.setmaxnreg, 2) << json;
      EXPECT_EQ(sp.whole.local_memory, 0) << json;
      ASSERT_TRUE(sp.has_main_loop) << json;
      EXPECT_EQ(sp.main_loop.mma, c.tile_k / 16 * blocks) << json;
      EXPECT_EQ(sp.main_loop.warpgroup_sync, 2) << json;
      // The same evidence as `compile --sass` lints it: nothing.
      core::KernelEvidence e{sp, core::assembler_advisories(k.log), k.resources.spill_store_bytes,
                             k.ptx.find("setmaxnreg") != std::string::npos};
      for (const core::Lint& l : core::lints(e)) ADD_FAILURE() << json << ": " << l.code << ": " << l.message;
    }
    std::string ptx = ::mgpu::testing::folded(k.ptx);
    EXPECT_NE(ptx.find("wgmma.mma_async"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.global.shared::cta"), std::string::npos);
    EXPECT_EQ(ptx.find(".multicast::cluster") != std::string::npos, c.cluster_dimension != ClusterDim::None) << json;
    ++ok;
  }
  std::string why;
  for (auto& [rule, n] : rejected) why += " " + rule + "=" + std::to_string(n);
  std::printf("default space, part %d: %llu configs, %d valid (%zu distinct kernels, %d assembled alone) compiled "
              "cleanly; rejected:%s\n", part, (unsigned long long)total, ok, proofs.size(), alone, why.c_str());
  auto s = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::printf("time: modules %.1f s, compiling and SASS %.1f s\n", s(t1 - t0), s(t2 - t1));
}
INSTANTIATE_TEST_SUITE_P(Parts, MatmulSm90Space, ::testing::Range(0, kSpaceParts),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param == 0   ? std::string("Unswapped")
                                  : i.param == 5 ? std::string("SplitK")
                                  : i.param == 6 ? std::string("PingPongUnswapped")
                                  : i.param == 7 ? std::string("StreamK")
                                  : i.param == 8 ? std::string("PingPongSwapAb")
                                                 : "SwapAbTileM" + std::to_string(8 << (i.param - 1));
                         });

TEST(MatmulSm90, BothBLayoutsAndOutputDtypesCompile) {
  MatmulConfig c;  // 2 x (128 x 128) per CTA, 4 stages
  for (BLayout layout : {BLayout::KN, BLayout::NK})
    for (DType out : {DType::BF16, DType::F16, DType::F32})
      for (DType in : {DType::BF16, DType::F16}) {
        MatmulProblem p{.m = 1000, .n = 776, .k = 72, .in_dtype = in, .out_dtype = out, .b_layout = layout};
        MatmulConfig cc = c;
        if (out == DType::F32) cc.max_concurrent_steps = 3;  // f32 epilogue buffers are twice the size
        BuiltMatmul b = build_matmul(p, cc, hopper());
        core::CompileResult r = core::compile_module(b.mlir, hopper());
        EXPECT_EQ(r.units.at(0).cubin.kernels.at("matmul").spill_store_bytes, 0);
        EXPECT_EQ(b.tensor_maps.at(2).element == core::TmaElement::F32, out == DType::F32);
        EXPECT_NO_THROW(core::validate_tensor_map_2d(b.tensor_maps.at(0)));
        EXPECT_NO_THROW(core::validate_tensor_map_2d(b.tensor_maps.at(1)));
        EXPECT_NO_THROW(core::validate_tensor_map_2d(b.tensor_maps.at(2)));
      }
}

// A pipelined k-step asks the tensor cores for one fence and one wait, whatever the tile and
// the ring: more in the PTX's k-loop would serialise its MMAs by the template's own hand (the
// serialised-mma lint measures only what the assembler adds to this).
TEST(MatmulSm90, TheKLoopAsksForOneFenceAndOneWaitPerStep) {
  MatmulProblem p{.m = 1024, .n = 1024, .k = 512};
  for (int stages : {2, 4})
    for (int tile_m : {64, 128}) {
      MatmulConfig c;
      c.tile_m = tile_m;
      c.max_concurrent_steps = stages;
      const core::PtxMainLoop loop =
          core::ptx_main_loop(core::compile_module(build_matmul(p, c, hopper()).mlir, hopper()).units.at(0).ptx);
      EXPECT_TRUE(loop.found) << tile_m << " " << stages;
      EXPECT_EQ(loop.warpgroup_sync, 2) << tile_m << " " << stages;
    }
}

// Issue 19: where two accumulators fit (overlaps_epilogue), a tile's epilogue stores run while
// the next tile's first MMAs are in flight: in the PTX, the MMAs issued just before the first
// staging store are retired only down to one group (wait_group 1), never all (wait_group 0).
// Where they do not fit, the tile's MMAs are all retired before its epilogue. The virtual
// device proves both orders correct (verify); this pins which order each config gets.
TEST(MatmulSm90, EpilogueOverlapsTheNextTilesFirstMmasWhereTwoAccumulatorsFit) {
  auto wait_all_before_first_store = [](const MatmulConfig& c) {
    MatmulProblem p{.m = 1024, .n = 1024, .k = 512};
    std::string ptx = ::mgpu::testing::folded(core::compile_module(build_matmul(p, c, hopper()).mlir, hopper()).units.at(0).ptx);
    size_t store = ptx.find("st.shared");
    size_t mma = ptx.rfind("wgmma.mma_async", store);
    EXPECT_NE(store, std::string::npos);
    EXPECT_NE(mma, std::string::npos);
    return ptx.substr(mma, store - mma).find("wgmma.wait_group.sync.aligned 0;") != std::string::npos;
  };
  MatmulConfig small;  // 64 x 128 per warpgroup: 64 accumulator registers, twice 128 <= 200
  small.tile_m = 64;
  MatmulConfig big;    // the default 128 x 128: 128 registers, twice is too many
  ASSERT_TRUE(overlaps_epilogue(small));
  ASSERT_FALSE(overlaps_epilogue(big));
  EXPECT_FALSE(wait_all_before_first_store(small));
  EXPECT_TRUE(wait_all_before_first_store(big));
}

TEST(MatmulSm90, RegisterRuleAgreesWithTheAssembler) {
  // Configs rejected only for their accumulator must really spill when built anyway, and the
  // largest accepted accumulator must not.
  MatmulProblem p{.m = 4096, .n = 4096, .k = 4096, .b_layout = BLayout::NK};
  auto build_unchecked = [&](int tile_m, int tile_n) {
    MatmulConfig c;
    c.tile_m = tile_m;
    c.tile_n = tile_n;
    c.max_concurrent_steps = 2;
    c.epi_tile_n = 8;
    return c;
  };
  // With setmaxnreg in effect (whole-program ptxas) the consumers hold 232 registers.
  MatmulConfig at_limit = build_unchecked(128, 200), over = build_unchecked(128, 208), far = build_unchecked(256, 128);
  EXPECT_FALSE(why_invalid(p, at_limit, hopper()).has_value());
  ASSERT_TRUE(why_invalid(p, over, hopper()).has_value());
  EXPECT_EQ(why_invalid(p, over, hopper())->rule, "registers");
  EXPECT_EQ(why_invalid(p, far, hopper())->rule, "registers");
  auto spills = [&](const MatmulConfig& c) {
    BuiltMatmul b = build_matmul_unchecked(p, c);
    return core::compile_module(b.mlir, hopper()).units.at(0).cubin.kernels.at("matmul").spill_store_bytes;
  };
  EXPECT_EQ(spills(at_limit), 0);
  EXPECT_GT(spills(over), 0);
  EXPECT_GT(spills(far), 0);
}

TEST(MatmulSm90, SmemRuleMatchesThePlanTheKernelUses) {
  MatmulProblem p;
  MatmulConfig c;
  c.max_concurrent_steps = 6;  // 6 x (256 + 128) x 64 x 2 bytes = 288 KB > 227 KB
  auto r = why_invalid(p, c, hopper());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rule, "smem");
  c.max_concurrent_steps = 4;
  EXPECT_FALSE(why_invalid(p, c, hopper()).has_value());
  EXPECT_EQ(build_matmul(p, c, hopper()).dynamic_smem_bytes, smem_plan(p, c).total_bytes());
  EXPECT_LE(smem_plan(p, c).total_bytes(), hopper().smem_per_block_optin);
}

TEST(MatmulSm90, ModuleTextIsIndependentOfShapeAndTileOrder) {
  MatmulConfig a, b;
  b.grid_minor_dim = Dim::M;
  b.grid_tile_width = 1;
  MatmulProblem p1{.m = 4096, .n = 4096, .k = 4096}, p2{.m = 1000, .n = 24, .k = 8};
  EXPECT_EQ(build_matmul(p1, a, hopper()).mlir, build_matmul(p2, b, hopper()).mlir);
  MatmulProblem p3 = p1;
  p3.b_layout = BLayout::NK;
  EXPECT_NE(build_matmul(p1, a, hopper()).mlir, build_matmul(p3, a, hopper()).mlir);
}

TEST(MatmulSm90, TheGpuTestCasesAreValidAndCompile) {
  for (const ::mgpu::testing::MatmulCase& tc : ::mgpu::testing::gpu_matmul_cases()) {
    MatmulConfig c = MatmulConfig::from_tuning_config(core::TuningConfig::from_json(tc.config));
    auto r = why_invalid(tc.problem, c, hopper());
    ASSERT_FALSE(r.has_value()) << tc.config << ": " << r->reason;
    BuiltMatmul b = build_matmul(tc.problem, c, hopper());
    EXPECT_EQ(core::compile_module(b.mlir, hopper()).units.at(0).cubin.kernels.at("matmul").spill_store_bytes, 0)
        << tc.problem.key() << " " << tc.config;
  }
}

TEST(MatmulSm90, KRowsThatAreNoSwizzleWidthAreRejected) {
  // Regression: tile_k 48 at 16 bits (96-byte K rows) passed the shape rule and computed
  // garbage on the virtual device (relative error ~1.4); 32-bit-multiple widths other than
  // 32, 64, 128 or a multiple of 128 bytes are no swizzle atom.
  for (DType in : {DType::BF16, DType::F16})
    for (int tile_k : {16, 32, 48, 64, 80, 96, 112, 128, 192, 256}) {
      MatmulProblem p{.m = 1024, .n = 1024, .k = 1024, .in_dtype = in, .out_dtype = in};
      MatmulConfig c;
      c.tile_k = tile_k;
      c.max_concurrent_steps = 2;
      const int bytes = tile_k * 2;
      const bool atoms = bytes == 32 || bytes == 64 || bytes == 128 || bytes % 128 == 0;
      auto r = why_invalid(p, c, hopper());
      if (atoms) EXPECT_FALSE(r.has_value() && r->rule == "shape") << tile_k << ": " << r->reason;
      else {
        ASSERT_TRUE(r.has_value()) << "tile_k " << tile_k;
        EXPECT_EQ(r->rule, "shape");
        EXPECT_NE(r->reason.find("whole swizzle atoms"), std::string::npos) << r->reason;
      }
    }
}

TEST(MatmulSm90, MulticastHalvesNeedNoSwizzlePatternAlignment) {
  // Regression (issue 17): a "multicast" rule demanded that each CTA's half of the shared
  // operand be whole 1024-byte swizzle patterns and rejected these, which the virtual device
  // runs correctly (GpuMatmul runs them): the swizzle follows the absolute shared address.
  for (const char* json : {::mgpu::testing::kHalvesOffPattern64, ::mgpu::testing::kHalvesOffPattern32}) {
    MatmulProblem p{.m = 520, .n = 392, .k = 264, .b_layout = BLayout::NK};
    MatmulConfig c = MatmulConfig::from_tuning_config(core::TuningConfig::from_json(json));
    auto r = why_invalid(p, c, hopper());
    EXPECT_FALSE(r.has_value()) << json << ": " << r->rule << ": " << r->reason;
  }
  // What the ISA does require -- each TMA box 128-byte aligned in the stage -- is the load
  // plan's invariant: 6 rows of 32 bytes split in halves of 3 would put the second at byte 96.
  EXPECT_NO_THROW(kernels::plan_loads(8, 1, 32, 2, true));
  try {
    kernels::plan_loads(6, 1, 32, 2, true);
    FAIL() << "a 96-byte half was planned";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::Compile);
    EXPECT_NE(std::string(e.what()).find("128-byte"), std::string::npos) << e.what();
  }
}

TEST(MatmulSm90, InvalidConfigIsRefusedWithItsReason) {
  MatmulConfig c;
  c.tile_m = 96;
  try {
    build_matmul(MatmulProblem{}, c, hopper());
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("tile_m 96"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mgpu::kernels::sm90
