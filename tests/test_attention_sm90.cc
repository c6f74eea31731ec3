// The sm_90a attention kernel (kernels/attention/sm90_kernel.h) compiled through the whole
// pipeline and run on the virtual device against the float64 reference, within the derived
// tolerance (kernels/attention/tolerance.h), clean under several schedules: ragged lengths,
// causal (with seq_q < seq_kv and seq_q > seq_kv, whose first rows see no key), grouped-query
// heads, head dims 64 and 128, both block_kv and ring depths that wrap.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/compiler.h"
#include "core/emu/device.h"
#include "core/emu/engines/tensor_map.h"
#include "core/sass/ptx_main_loop.h"
#include "core/sass/sass_profile.h"
#include "kernels/attention/reference.h"
#include "kernels/attention/sm90_kernel.h"
#include "kernels/attention/tolerance.h"

namespace mgpu::kernels::attention {
namespace {

struct Case {
  AttentionProblem p;
  AttentionConfig c;
};

std::string reports(const emu::LaunchResult& r) {
  std::string s;
  for (const auto& x : r.reports) s += x.format() + "\n";
  return s;
}

struct Outcome {
  emu::LaunchResult launch;
  AttentionComparison cmp;
};

Outcome run(const Case& k, std::uint64_t seed, const AttentionFaults& faults = {}) {
  const AttentionProblem& p = k.p;
  BuiltAttention b = build_attention_sm90(p, k.c, faults);
  core::CompileResult cr = core::compile_module(b.mlir, core::parse_arch("sm_90a"));
  emu::Device dev;
  const emu::LoadedModule& mod = dev.load(cr.units.at(0).ptx);

  std::mt19937 rng(static_cast<std::uint32_t>(seed * 7919));
  std::normal_distribution<double> normal(0.0, 1.0);
  auto make = [&](std::int64_t n, double spread) {
    std::vector<std::uint16_t> w(static_cast<std::size_t>(n));
    for (auto& x : w) x = encode(p.dtype, spread * normal(rng));
    return w;
  };
  std::vector<std::uint16_t> q = make(p.q_elements(), 1.5), kk = make(p.kv_elements(), 1.5), v = make(p.kv_elements(), 1.0);
  auto upload = [&](const std::vector<std::uint16_t>& w) {
    std::uint64_t a = dev.memory().alloc(w.size() * 2);
    std::memcpy(dev.memory().find(a, w.size() * 2), w.data(), w.size() * 2);
    return a;
  };
  std::uint64_t dq = upload(q), dk = upload(kk), dv = upload(v);
  std::uint64_t dout = dev.memory().alloc(static_cast<std::uint64_t>(p.q_elements()) * 2);
  std::uint64_t dlse = dev.memory().alloc(static_cast<std::uint64_t>(p.lse_elements()) * 4);
  std::memset(dev.memory().find(dout, p.q_elements() * 2), 0xFF, p.q_elements() * 2);  // NaN: every element must be written
  std::memset(dev.memory().find(dlse, p.lse_elements() * 4), 0xFF, p.lse_elements() * 4);
  alignas(64) std::uint8_t maps[3][128];
  const std::uint32_t dtype = p.dtype == DType::F16 ? 6 : 9;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16 / BFLOAT16
  std::uint64_t bases[3] = {dq, dk, dv};
  for (int i = 0; i < 3; ++i) {
    AttentionTensorMap m = attention_tensor_map(p, k.c, i == 0);
    std::uint32_t es[4] = {1, 1, 1, 1};
    EXPECT_EQ(emu::encode_tensor_map(maps[i], dtype, 4, bases[i], m.dims, m.strides, m.box, es, 0, 3 /*128B*/, 0), "");
  }
  // Kernels take each CUtensorMap as a pointer into global memory (core/built_kernel.h).
  std::uint64_t m0 = dev.memory().alloc(128), m1 = dev.memory().alloc(128), m2 = dev.memory().alloc(128);
  std::memcpy(dev.memory().find(m0, 128), maps[0], 128);
  std::memcpy(dev.memory().find(m1, 128), maps[1], 128);
  std::memcpy(dev.memory().find(m2, 128), maps[2], 128);
  std::int32_t sq = static_cast<std::int32_t>(p.seq_q), skv = static_cast<std::int32_t>(p.seq_kv),
               group = static_cast<std::int32_t>(p.group_size());
  void* args[] = {&m0, &m1, &m2, &dout, &dlse, &sq, &skv, &group};
  emu::LaunchConfig cfg;
  for (int i = 0; i < 3; ++i) cfg.grid[i] = b.grid[i];
  cfg.block[0] = static_cast<std::uint32_t>(b.block_threads);
  cfg.dynamic_smem = static_cast<std::uint32_t>(b.dynamic_smem_bytes);
  cfg.seed = seed;
  Outcome r;
  r.launch = dev.launch(mod, b.kernel_name, cfg, args);
  std::vector<std::uint16_t> o(static_cast<std::size_t>(p.q_elements()));
  std::vector<float> l(static_cast<std::size_t>(p.lse_elements()));
  std::memcpy(o.data(), dev.memory().find(dout, o.size() * 2), o.size() * 2);
  std::memcpy(l.data(), dev.memory().find(dlse, l.size() * 4), l.size() * 4);
  AttentionReference ref = reference_attention(p, q, kk, v);
  ToleranceOptions opt;
  opt.min_block_kv = k.c.block_kv;
  r.cmp = compare_attention(p, ref, o, l, opt);
  return r;
}

AttentionProblem problem(std::int64_t b, std::int64_t h, std::int64_t kvh, std::int64_t sq, std::int64_t skv,
                         std::int64_t d, bool causal, DType t = DType::BF16) {
  AttentionProblem p;
  p.batch = b;
  p.heads = h;
  p.kv_heads = kvh;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = d;
  p.causal = causal;
  p.dtype = t;
  return p;
}

void expect_correct(const Case& k, int seeds) {
  for (int seed = 1; seed <= seeds; ++seed) {
    Outcome r = run(k, static_cast<std::uint64_t>(seed));
    ASSERT_TRUE(r.launch.ok) << reports(r.launch);
    EXPECT_TRUE(r.launch.reports.empty()) << reports(r.launch);
    EXPECT_TRUE(r.cmp.ok) << "seed " << seed << ": " << r.cmp.describe();
    if (seed == 1) ::testing::Test::RecordProperty("worst", r.cmp.describe());
  }
}

TEST(AttentionSm90, RaggedGroupedQueryNonCausal) {
  expect_correct({problem(2, 4, 2, 150, 200, 64, false), {64, 64, 2}}, 2);
}

TEST(AttentionSm90, CausalSquareRaggedWithARingThatWraps) {
  expect_correct({problem(1, 2, 1, 200, 200, 64, true), {64, 64, 2}}, 2);
}

TEST(AttentionSm90, CausalDecodeLikeFewerQueriesThanKeys) {
  expect_correct({problem(1, 2, 2, 40, 300, 128, true, DType::F16), {64, 128, 2}}, 2);
}

TEST(AttentionSm90, CausalMoreQueriesThanKeysLeavesEmptyRows) {
  expect_correct({problem(1, 1, 1, 190, 70, 64, true), {64, 64, 1}}, 2);
}

TEST(AttentionSm90, HeadDim128Block128ThreeStages) {
  expect_correct({problem(1, 2, 1, 128, 384, 128, false), {64, 128, 3}}, 1);
}

// The intra-warpgroup overlap: the same problems, P.V of block j-1 in flight under the softmax
// of block j; a CTA whose rows see no key skips the prologue and the last P.V.
constexpr ConsumerSchedule kOverlap = ConsumerSchedule::IntraWgOverlap;

TEST(AttentionSm90Overlap, RaggedGroupedQueryNonCausal) {
  expect_correct({problem(2, 4, 2, 150, 200, 64, false), {64, 64, 2, kOverlap}}, 2);
}

TEST(AttentionSm90Overlap, CausalSquareRaggedWithARingThatWraps) {
  expect_correct({problem(1, 2, 1, 200, 200, 64, true), {64, 64, 2, kOverlap}}, 2);
}

TEST(AttentionSm90Overlap, CausalMoreQueriesThanKeysLeavesEmptyRows) {
  expect_correct({problem(1, 1, 1, 190, 70, 64, true), {64, 64, 2, kOverlap}}, 2);
}

TEST(AttentionSm90Overlap, HeadDim128Block128ThreeStages) {
  expect_correct({problem(1, 2, 1, 128, 384, 128, false), {64, 128, 3, kOverlap}}, 1);
}

bool reported(const emu::LaunchResult& r, emu::ReportKind kind) {
  for (const auto& x : r.reports)
    if (x.kind == kind) return true;
  return false;
}

// The faulty twins of the kernels above: each must be caught.
TEST(AttentionSm90Faults, RescaleWithoutAFenceIsReportedUnderEverySchedule) {
  AttentionFaults f;
  f.no_fence_after_rescale = true;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    Outcome r = run({problem(1, 1, 1, 128, 192, 64, false), {64, 64, 2}}, seed, f);
    EXPECT_TRUE(reported(r.launch, emu::ReportKind::WgmmaFence)) << reports(r.launch);
  }
}

TEST(AttentionSm90Faults, StageReleasedBeforeItsWgmmaRetiredIsReported) {
  AttentionFaults f;
  f.release_before_retire = true;
  int caught = 0;
  std::string missed;
  const int seeds = 8;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    Outcome r = run({problem(1, 1, 1, 128, 256, 64, false), {64, 64, 1}}, seed, f);
    if (!r.launch.reports.empty() || !r.launch.ok) {
      ++caught;
      if (seed == 1) ::testing::Test::RecordProperty("first_report", r.launch.reports[0].format());
    }
    else if (missed.empty()) missed = "seed " + std::to_string(seed) + " ran clean: " + r.cmp.describe();
  }
  ::testing::Test::RecordProperty("caught_of_8", caught);
  EXPECT_GE(caught, seeds / 2) << missed;
}

// The overlap's own twins: its one fence (before S_j and P_{j-1}.V_{j-1}, after the rescale)
// left out, and block j-1's stage freed while its P.V MMA may still read V.
TEST(AttentionSm90Faults, OverlapWithoutItsFenceIsReportedUnderEverySchedule) {
  AttentionFaults f;
  f.no_fence_after_rescale = true;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    Outcome r = run({problem(1, 1, 1, 128, 192, 64, false), {64, 64, 2, kOverlap}}, seed, f);
    EXPECT_TRUE(reported(r.launch, emu::ReportKind::WgmmaFence)) << reports(r.launch);
  }
}

TEST(AttentionSm90Faults, OverlapStageReleasedBeforeItsWgmmaRetiredIsReported) {
  AttentionFaults f;
  f.release_before_retire = true;
  int caught = 0;
  const int seeds = 8;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    Outcome r = run({problem(1, 1, 1, 128, 384, 64, false), {64, 64, 2, kOverlap}}, seed, f);
    caught += !r.launch.reports.empty() || !r.launch.ok || !r.cmp.ok;
  }
  ::testing::Test::RecordProperty("caught_of_8", caught);
  EXPECT_GE(caught, seeds / 2);
}

TEST(AttentionSm90Faults, CausalMaskOffByOneIsAWrongResult) {
  AttentionFaults f;
  f.causal_off_by_one = true;
  Outcome r = run({problem(1, 1, 1, 128, 128, 64, true), {64, 64, 2}}, 1, f);
  ASSERT_TRUE(r.launch.ok) << reports(r.launch);
  EXPECT_FALSE(r.cmp.ok) << r.cmp.describe();
}

// The register estimate of why_invalid() is checked here against ptxas: every valid config at
// every head dim assembles without spills or advisories (a consumer is register-bound).
TEST(AttentionSm90, EveryValidConfigAssemblesWithoutSpillsOrAdvisories) {
  int valid = 0;
  for (std::int64_t d : {64, 128, 256})
    for (int bkv : {64, 128})
      for (int stages = 1; stages <= 4; ++stages)
        for (bool causal : {false, true})
          for (ConsumerSchedule schedule : {ConsumerSchedule::Serial, kOverlap}) {
          AttentionProblem p = problem(1, 1, 1, 256, 256, d, causal);
          AttentionConfig c{64, bkv, stages, schedule};
          if (why_invalid(p, c)) continue;
          ++valid;
          core::CompileResult cr = core::compile_module(build_attention_sm90(p, c).mlir, core::parse_arch("sm_90a"));
          const core::Cubin& cubin = cr.units.at(0).cubin;
          const core::KernelResources& r = cubin.kernels.at("attention");
          const std::string where = "d " + std::to_string(d) + " block_kv " + std::to_string(bkv) + " stages " +
                                    std::to_string(stages) + (causal ? " causal" : "") +
                                    (schedule == kOverlap ? " overlap" : "");
          EXPECT_EQ(r.spill_store_bytes + r.spill_load_bytes, 0) << where;
          EXPECT_TRUE(core::assembler_advisories(cubin.log).empty()) << where << "\n" << cubin.log;
          // What the KV loop asks of the tensor cores (the serialised-mma lint measures the
          // assembler against it): serial, a fence and a wait for each of S = Q.K^T and
          // O += P.V; the overlap, one fence issuing S_j beside P.V of block j-1, a wait down to
          // one group (S_j) and a wait for all before P_j is packed.
          const core::PtxMainLoop loop = core::ptx_main_loop(cr.units.at(0).ptx);
          EXPECT_TRUE(loop.found) << where;
          EXPECT_EQ(loop.warpgroup_sync, schedule == kOverlap ? 3 : 4) << where;
        }
  EXPECT_GT(valid, 40);
}

// The whole space (every head dim, dtype, mask and valid config) verified at three classes
// each: ragged lengths with a ring that wraps, grouped-query heads, and with causal masks both
// seq_q < seq_kv and seq_q > seq_kv (rows that see no key).
TEST(AttentionSm90, EveryValidConfigIsCorrectAtThreeProblemClasses) {
  int verified = 0;
  for (std::int64_t d : {64, 128, 256})
    for (DType t : {DType::BF16, DType::F16})
      for (bool causal : {false, true})
        for (int bkv : {64, 128})
          for (int stages = 1; stages <= 4; ++stages)
            for (ConsumerSchedule schedule : {ConsumerSchedule::Serial, kOverlap}) {
            AttentionConfig c{64, bkv, stages, schedule};
            std::vector<AttentionProblem> classes = {
                problem(1, 2, 2, 130, 64 * 5 + 17, d, causal, t),                      // ragged, 6 blocks: the ring wraps
                problem(1, 4, 1, 70, 150, d, causal, t),                               // grouped-query heads
                causal ? problem(1, 1, 1, 200, 90, d, true, t) : problem(2, 1, 1, 64, 64, d, false, t)};
            if (why_invalid(classes[0], c)) continue;
            for (const AttentionProblem& p : classes) {
              Outcome r = run({p, c}, 1);
              const std::string where = p.key() + " block_kv " + std::to_string(bkv) + " stages " + std::to_string(stages) +
                                        (schedule == kOverlap ? " overlap" : "");
              ASSERT_TRUE(r.launch.ok) << where << "\n" << reports(r.launch);
              EXPECT_TRUE(r.launch.reports.empty()) << where << "\n" << reports(r.launch);
              EXPECT_TRUE(r.cmp.ok) << where << ": " << r.cmp.describe();
              ++verified;
            }
          }
  ::testing::Test::RecordProperty("verified", verified);
  EXPECT_GT(verified, 300);
}

TEST(AttentionSm90, ValidityNamesItsRules) {
  AttentionProblem p = problem(1, 1, 1, 128, 128, 256, false);
  EXPECT_EQ(why_invalid(p, {64, 128, 2})->rule, "registers");
  EXPECT_FALSE(why_invalid(p, {64, 64, 2}).has_value());
  EXPECT_EQ(why_invalid(p, {64, 96, 2})->rule, "block_kv");
  EXPECT_EQ(why_invalid(p, {32, 64, 2})->rule, "block_q");
  EXPECT_EQ(why_invalid(problem(1, 1, 1, 128, 128, 256, false), {64, 64, 4})->rule, "smem");
  EXPECT_EQ(why_invalid(p, {64, 64, 1, kOverlap})->rule, "max_concurrent_steps");  // K_j beside V_{j-1}
  EXPECT_FALSE(why_invalid(p, {64, 64, 2, kOverlap}).has_value());
}

}  // namespace
}  // namespace mgpu::kernels::attention
