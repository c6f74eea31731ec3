// The Blackwell matmul template without a GPU (no session ever has a B200): the tile walk
// covers every output tile exactly once, clusters included (the kernel's own index builder,
// JIT-run on the CPU); the validity rules agree with what the instructions and the builder
// accept; and every valid config of the default space compiles for sm_100a with the tcgen05
// instructions meant, collective configs with cta_group::2.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "core/compiler.h"
#include "core/error.h"
#include "kernels/matmul_sm100/config.h"
#include "kernels/matmul_sm100/cost_model.h"
#include "kernels/matmul_sm100/kernel.h"
#include "kernels/matmul_sm100/validity.h"
#include "kernels/matmul_template.h"
#include "tests/support/compile_space.h"
#include "tests/support/jit_tile_walk.h"

namespace mgpu::kernels::sm100 {
namespace {

const core::ArchSpec& blackwell() { return core::parse_arch("sm_100a"); }

MatmulConfig config(int tile_n, int collective, int epilogue_tile_n = 64, int stages = 4, int tile_k = 64) {
  MatmulConfig c;
  c.tile_n = tile_n;
  c.collective = collective;
  c.epilogue_tile_n = epilogue_tile_n;
  c.max_concurrent_steps = stages;
  c.tile_k = tile_k;
  return c;
}

TEST(MatmulSm100Config, RoundTripsThroughTuningConfigJson) {
  MatmulConfig c = config(64, 0, 32);
  c.grid_minor_dim = Dim::M;
  core::TuningConfig t = core::TuningConfig::from_json(c.to_tuning_config().to_json());
  EXPECT_EQ(MatmulConfig::from_tuning_config(t).to_tuning_config(), c.to_tuning_config());
  EXPECT_NO_THROW(default_space().check_member(t));
  EXPECT_THROW(MatmulConfig::from_tuning_config(core::TuningConfig::from_json(R"({"tile_m": 128})")), core::Error);
  // A Hopper config is not a Blackwell config: the unknown name is the message.
  try {
    MatmulConfig::from_tuning_config(core::TuningConfig::from_json(R"({"wg_dimension": "M"})"));
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("unknown matmul config parameter 'wg_dimension'"), std::string::npos);
  }
}

TEST(MatmulSm100Config, TheTemplateIsWhatSm100Names) {
  const MatmulTemplate& t = matmul_template(core::parse_arch("sm_100"));
  EXPECT_EQ(t.name(), "matmul_sm100");
  EXPECT_EQ(t.arch().name, "sm_100a");
  EXPECT_NE(t.source_hash(), matmul_template(core::parse_arch("sm_90a")).source_hash());
  EXPECT_NO_THROW(t.check_config(t.default_config()));
  EXPECT_FALSE(t.why_invalid(MatmulProblem{}, t.default_config()).has_value());
}

// Every in-bounds CTA tile of an M x N output exactly once, over all CTAs of the persistent
// grid and all their iterations; CTAs of a pair may also own a tile past the edge (its loads
// are zero-filled, its store clipped), never one inside twice.
void expect_exact_cover(const ::mgpu::testing::JitTileWalk& walk, const TileWalkShape& s, int m, int n, int sm_count,
                        int minor_is_n, int width) {
  const int m_tiles = (m + s.cta_tile_m - 1) / s.cta_tile_m, n_tiles = (n + s.cta_tile_n - 1) / s.cta_tile_n;
  const unsigned grid = kernels::persistent_grid(m, n, s, sm_count);
  ASSERT_EQ(grid % s.cluster_size(), 0u);
  std::set<std::pair<int, int>> seen;
  for (unsigned b = 0; b < grid; ++b) {
    ::mgpu::testing::WalkArgs a{m, n, static_cast<int>(b), static_cast<int>(grid),
                                static_cast<int>(b % s.cluster_size()), minor_is_n, width};
    int count = walk.count(a);
    for (int it = 0; it < count; ++it) {
      auto [m0, n0] = walk.origin(a, it);
      ASSERT_EQ(m0 % s.cta_tile_m, 0);
      ASSERT_EQ(n0 % s.cta_tile_n, 0);
      int tm = m0 / s.cta_tile_m, tn = n0 / s.cta_tile_n;
      ASSERT_LT(tn, n_tiles) << "column tiles are never padded";
      if (tm >= m_tiles) {
        ASSERT_EQ(tm, m_tiles) << "only the odd CTA of the last pair may fall off the edge";
        continue;
      }
      ASSERT_TRUE(seen.insert({tm, tn}).second)
          << "tile (" << tm << "," << tn << ") twice; M=" << m << " N=" << n << " grid " << grid;
    }
  }
  ASSERT_EQ(seen.size(), size_t(m_tiles) * n_tiles) << "M=" << m << " N=" << n << " grid " << grid;
}

TEST(MatmulSm100Schedule, EveryOutputTileExactlyOnceWithAndWithoutPairs) {
  int cases = 0;
  for (const MatmulConfig& c : {config(128, 1), config(64, 1), config(256, 0), config(64, 0)}) {
    TileWalkShape s = walk_shape(c);
    ::mgpu::testing::JitTileWalk walk(s);
    for (int m : {1, 128, 130, 384, 1000, 4096})
      for (int n : {8, 256, 500, 2048})
        for (int sms : {148, 8, 3})
          for (int minor : {0, 1})
            for (int width : {1, 3, 8}) {
              expect_exact_cover(walk, s, m, n, sms, minor, width);
              ++cases;
            }
  }
  EXPECT_EQ(cases, 4 * 6 * 4 * 3 * 2 * 3);
}

TEST(MatmulSm100Validity, EachRuleWithItsReason) {
  MatmulProblem p{.m = 4096, .n = 8192, .k = 4096, .in_dtype = DType::F16, .out_dtype = DType::F16};
  auto rule = [&](const MatmulConfig& c) {
    auto r = why_invalid(p, c, blackwell());
    return r ? r->rule + ": " + r->reason : std::string("valid");
  };
  MatmulConfig m64 = config(128, 0);
  m64.tile_m = 64;
  EXPECT_NE(rule(m64).find("shape: tile_m 64 is not 128"), std::string::npos) << rule(m64);
  EXPECT_NE(rule(config(72, 0)).find("shape: tile_n 72"), std::string::npos) << rule(config(72, 0));
  EXPECT_NE(rule(config(192, 1)).find("collective: collective tile_n 192"), std::string::npos);
  EXPECT_NE(rule(config(128, 2)).find("collective must be 0 or 1"), std::string::npos);
  EXPECT_NE(rule(config(64, 0, 128)).find("epilogue: epilogue_tile_n 128 does not divide"), std::string::npos);
  EXPECT_NE(rule(config(128, 0, 48)).find("power of two"), std::string::npos);
  EXPECT_NE(rule(config(256, 0, 64, 6, 128)).find("smem: needs"), std::string::npos);
  EXPECT_EQ(rule(config(128, 1)), "valid");
  EXPECT_EQ(rule(config(256, 0, 128, 3)), "valid");
  // Swizzled epilogue rows are 32 bytes at least: 8 columns are too few for f16, enough for f32.
  EXPECT_NE(rule(config(128, 0, 8)).find("epilogue: an epilogue row of 8 x f16 is 16 bytes"), std::string::npos);
  MatmulProblem f32 = p;
  f32.out_dtype = DType::F32;
  EXPECT_FALSE(why_invalid(f32, config(128, 0, 8), blackwell()).has_value());
}

TEST(MatmulSm100Validity, RejectedConfigsReallyCannotWork) {
  // The hardware limits behind the rules: a pair's MMA N past 256 or an accumulator past 512
  // TMEM columns is refused by the builder itself; an SMEM plan past the opt-in limit is the
  // size the kernel would launch with; every valid config's accumulator fits TMEM.
  MatmulProblem p{.m = 4096, .n = 8192, .k = 4096, .in_dtype = DType::F16, .out_dtype = DType::F16};
  EXPECT_THROW(build_matmul_unchecked(p, config(192, 1)), core::Error);
  EXPECT_THROW(build_matmul_unchecked(p, config(256, 1)), core::Error);
  MatmulConfig big = config(256, 0, 64, 6, 128);
  ASSERT_EQ(why_invalid(p, big, blackwell())->rule, "smem");
  EXPECT_GT(build_matmul_unchecked(p, big).dynamic_smem_bytes, blackwell().smem_per_block_optin);
  default_space().enumerate([&](const core::TuningConfig& t) {
    MatmulConfig c = MatmulConfig::from_tuning_config(t);
    if (why_invalid(p, c, blackwell())) return;
    ASSERT_LE(c.tmem_alloc_columns(), blackwell().tmem_columns) << t.to_json();
    ASSERT_LE(smem_plan(p, c).total_bytes(), blackwell().smem_per_block_optin) << t.to_json();
  });
}

TEST(MatmulSm100, EveryValidConfigOfTheDefaultSpaceCompilesWithoutSpills) {
  // The problem of `mgpu-tune matmul --arch sm_100 --m 4096 --n 8192 --k 4096 --dtype f16`.
  MatmulProblem p{.m = 4096, .n = 8192, .k = 4096, .in_dtype = DType::F16, .out_dtype = DType::F16};
  std::vector<MatmulConfig> valid;
  std::map<std::string, int> rejected;
  default_space().enumerate([&](const core::TuningConfig& t) {
    MatmulConfig c = MatmulConfig::from_tuning_config(t);
    if (auto r = why_invalid(p, c, blackwell())) ++rejected[r->rule];
    else valid.push_back(c);
  });
  ASSERT_FALSE(valid.empty());
  std::vector<std::string> modules;
  modules.reserve(valid.size());
  for (const MatmulConfig& c : valid) modules.push_back(build_matmul(p, c, blackwell()).mlir);
  std::vector<std::pair<std::string, const std::string*>> texts;
  for (size_t i = 0; i < valid.size(); ++i) texts.emplace_back(valid[i].to_tuning_config().to_json(), &modules[i]);
  auto compiled = ::mgpu::testing::compile_unique(texts, blackwell());
  int collective = 0;
  for (const MatmulConfig& c : valid) {
    const std::string json = c.to_tuning_config().to_json();
    const core::CompileOutcome& o = compiled.of(json);
    ASSERT_TRUE(o.ok()) << json << ": " << o.error->what();
    EXPECT_EQ(o.result->units.at(0).cubin.kernels.at("matmul").spill_store_bytes, 0) << json;
    std::string ptx = ::mgpu::testing::folded(o.result->units.at(0).ptx);
    const std::string group = c.collective ? "cta_group::2" : "cta_group::1";
    for (std::string op : {"tcgen05.mma." + group + ".kind::f16", "tcgen05.alloc." + group, "tcgen05.dealloc." + group,
                           std::string("tcgen05.ld.sync.aligned.32x32b.x") + std::to_string(c.epilogue_tile_n),
                           std::string("tcgen05.commit."), std::string("cp.async.bulk.tensor.2d.global.shared::cta")})
      EXPECT_NE(ptx.find(op), std::string::npos) << json << " lacks " << op;
    // Collective loads complete on the leader's barrier (cta_group::2); solo ones do not.
    EXPECT_EQ(ptx.find("complete_tx::bytes.cta_group::2") != std::string::npos, c.collective == 1) << json;
    EXPECT_EQ(ptx.find("cta_group::1") == std::string::npos, c.collective == 1) << json;  // one group per kernel
    collective += c.collective;
  }
  EXPECT_GT(collective, 0);
  std::string why;
  for (auto& [rule, n] : rejected) why += " " + rule + "=" + std::to_string(n);
  std::printf("default space: %llu configs, %zu valid (%zu distinct kernels, %d collective configs) compiled "
              "cleanly for sm_100a; rejected:%s\n",
              (unsigned long long)default_space().size(), valid.size(), compiled.by_text.size(), collective, why.c_str());
}

TEST(MatmulSm100, BothBLayoutsAndOutputDtypesCompile) {
  for (BLayout layout : {BLayout::KN, BLayout::NK})
    for (DType out : {DType::BF16, DType::F16, DType::F32})
      for (int collective : {0, 1}) {
        MatmulProblem p{.m = 1000, .n = 776, .k = 72, .in_dtype = DType::BF16, .out_dtype = out, .b_layout = layout};
        MatmulConfig c = config(128, collective, out == DType::F32 ? 32 : 64, 4, 64);
        ASSERT_FALSE(why_invalid(p, c, blackwell()).has_value()) << why_invalid(p, c, blackwell())->reason;
        core::BuiltKernel b = build_matmul(p, c, blackwell());
        core::CompileResult r = core::compile_module(b.mlir, blackwell());
        EXPECT_EQ(r.units.at(0).cubin.kernels.at("matmul").spill_store_bytes, 0);
        EXPECT_EQ(b.cluster_size, collective ? 2 : 1);
        for (const core::TensorMap2D& m : b.tensor_maps) EXPECT_NO_THROW(core::validate_tensor_map_2d(m));
        // The epilogue stores 128-row pieces through a swizzled box as wide as one swizzle atom.
        EXPECT_EQ(b.tensor_maps.at(2).box_rows, 128u);
        EXPECT_EQ(b.tensor_maps.at(2).box_cols * core::element_bytes(b.tensor_maps.at(2).element),
                  static_cast<unsigned>(epilogue_atom_bytes(p, c)));
      }
}

TEST(MatmulSm100, ModuleTextIsIndependentOfShapeAndTileOrder) {
  MatmulConfig a = config(128, 1), b = a;
  b.grid_minor_dim = Dim::M;
  b.grid_tile_width = 1;
  MatmulProblem p1{.m = 4096, .n = 4096, .k = 4096}, p2{.m = 1000, .n = 24, .k = 8};
  EXPECT_EQ(build_matmul(p1, a, blackwell()).mlir, build_matmul(p2, b, blackwell()).mlir);
}

TEST(MatmulSm100CostModel, CollectivePairsFeedNarrowTilesBetter) {
  // A 128 x 64 MMA reads 24 KB of SMEM per k16 step for 0.26 M multiply-adds: SMEM-bound on one
  // SM; as a pair (each CTA reading half of B for an N=128 MMA) it is not.
  MatmulProblem p{.m = 8192, .n = 8192, .k = 8192};
  const core::DeviceSpec& b200 = blackwell().default_device();
  EXPECT_LT(mma_feed_efficiency(p, config(64, 0), b200), 1.0);
  EXPECT_DOUBLE_EQ(mma_feed_efficiency(p, config(64, 1), b200), 1.0);
  EXPECT_LT(predict(p, config(64, 1), b200).ms, predict(p, config(64, 0), b200).ms);
  default_space().enumerate([&](const core::TuningConfig& t) {
    MatmulConfig c = MatmulConfig::from_tuning_config(t);
    if (why_invalid(p, c, blackwell())) return;
    Prediction r = predict(p, c, b200);
    ASSERT_GE(r.ms, r.roofline_ms) << t.to_json();
  });
}

}  // namespace
}  // namespace mgpu::kernels::sm100
