// Problem classes and verification proxies (kernels/problem_class.h), checked by hand on
// small geometries and over the whole sm_90a space.
#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/matmul_template.h"
#include "kernels/problem_class.h"

namespace mgpu::kernels {
namespace {

MatmulProblem problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  MatmulProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

bool tma_ok(const MatmulProblem& p) {
  try {
    matmul_template(core::parse_arch("sm_90a")).check_problem(p);
    return true;
  } catch (const core::Error&) {
    return false;
  }
}

const KernelShape k128{128, 128, 1, 1, 64, 4};
const KernelShape pair_m{128, 128, 2, 1, 64, 4};  // a 2-CTA cluster along M

TEST(ProblemClass, FlagsFollowTheTilesTheGridAndTheCluster) {
  EXPECT_EQ(classify(problem(256, 256, 128), k128, 132).key(), "aligned");
  EXPECT_EQ(classify(problem(264, 256, 136), k128, 132).key(), "ragged_m+k_tail");
  EXPECT_EQ(classify(problem(256, 256, 128), k128, 2).key(), "multi_tile");  // 4 tiles, 2 CTAs
  EXPECT_EQ(classify(problem(256, 200, 128), k128, 4).key(), "ragged_n");
  // A pair along M: M = 256 + 64 leaves the last cluster tile's second CTA without rows.
  EXPECT_EQ(classify(problem(320, 256, 128), pair_m, 132).key(), "ragged_m+idle_cta+cluster");
  EXPECT_EQ(classify(problem(384, 256, 128), pair_m, 132).key(), "idle_cta+cluster");  // not ragged, still idle
  EXPECT_EQ(classify(problem(448, 256, 128), pair_m, 132).key(), "ragged_m+cluster");  // the second CTA has 64 rows
  EXPECT_EQ(classify(problem(512, 256, 128), pair_m, 2).key(), "multi_tile+cluster");
}

TEST(ProblemClass, TheProxyIsOfTheClassAskedSmallAndWrapsTheRing) {
  for (const KernelShape& s : {k128, pair_m}) {
    for (const MatmulProblem& like : {problem(4096, 4096, 4096), problem(1000, 3000, 200), problem(8, 8, 8)}) {
      ProblemClass want = classify(like, s, 132);
      auto proxy = proxy_problem(like, s, want, tma_ok);
      ASSERT_TRUE(proxy) << want.key();
      EXPECT_EQ(classify(proxy->problem, s, proxy->sm_count), want) << want.key();
      EXPECT_LE(proxy->problem.m * proxy->problem.n, 4 * 2 * 128 * 2 * 128) << want.key();
      EXPECT_TRUE(tma_ok(proxy->problem));
    }
  }
  ProblemClass several;
  several.multi_tile = true;
  auto p = proxy_problem(problem(1, 8, 8), k128, several, tma_ok);
  ASSERT_TRUE(p);
  // Tiles per CTA times K steps exceed the 4 stages: the ring's phases wrap.
  std::int64_t tiles = ((p->problem.m + 127) / 128) * ((p->problem.n + 127) / 128);
  EXPECT_GT((tiles + p->sm_count - 1) / p->sm_count * ((p->problem.k + 63) / 64), 4);
}

TEST(ProblemClass, AClassTheKernelCannotHaveHasNoProxy) {
  // 8-column CTA tiles: N is a multiple of 8 for bf16 C, so never ragged in N.
  KernelShape narrow{64, 8, 1, 1, 64, 2};
  ProblemClass ragged_n;
  ragged_n.ragged_n = true;
  EXPECT_FALSE(proxy_problem(problem(64, 64, 64), narrow, ragged_n, tma_ok));
  ProblemClass idle;  // idle CTAs need a cluster
  idle.idle_cta = true;
  EXPECT_FALSE(proxy_problem(problem(64, 64, 64), k128, idle, tma_ok));
}

// Where a kernel is proven before it ranks for a target: the smallest problem of the target's
// class, in the target's dtypes and layout; the target itself when its class has no smaller
// problem but it is small enough to emulate; nothing when it is neither.
TEST(ProblemClass, TheVerificationProxyIsOfTheTargetsClassOrTheTargetIfSmall) {
  MatmulProblem big = problem(4096, 4096, 4096);
  big.in_dtype = DType::F16;
  big.out_dtype = DType::F32;
  big.b_layout = BLayout::NK;
  const std::optional<ProxyProblem> proxy = verification_proxy(big, k128, 132, tma_ok);
  ASSERT_TRUE(proxy);
  EXPECT_EQ(classify(proxy->problem, k128, proxy->sm_count), classify(big, k128, 132));
  EXPECT_LT(proxy->problem.m * proxy->problem.n * proxy->problem.k, big.m * big.n * big.k);
  EXPECT_EQ(proxy->problem.in_dtype, DType::F16);
  EXPECT_EQ(proxy->problem.out_dtype, DType::F32);
  EXPECT_EQ(proxy->problem.b_layout, BLayout::NK);
  // No problem of any class passes `valid_problem`: a small target is its own proxy, a big one has none.
  auto none = [](const MatmulProblem&) { return false; };
  const std::optional<ProxyProblem> self = verification_proxy(problem(256, 256, 128), k128, 132, none);
  ASSERT_TRUE(self);
  EXPECT_EQ(self->problem.key(), problem(256, 256, 128).key());
  EXPECT_EQ(self->sm_count, 132);
  EXPECT_FALSE(verification_proxy(big, k128, 132, none));
}

TEST(ProblemClass, StandardClassesCoverEveryFlagOverTheHopperSpace) {
  const MatmulTemplate& t = matmul_template(core::parse_arch("sm_90a"));
  MatmulProblem like = problem(256, 256, 256);
  std::map<std::string, int> seen;
  std::map<std::string, std::vector<ProblemClass>> by_shape;  // many configs share a geometry
  t.space().enumerate([&](const core::TuningConfig& c) {
    if (t.why_invalid(like, c)) return;
    KernelShape s = t.kernel_shape(c);
    std::string key = fmt::format("{} {} {} {} {} {}", s.cta_tile_m, s.cta_tile_n, s.cluster_m, s.cluster_n, s.tile_k, s.stages);
    auto it = by_shape.find(key);
    if (it == by_shape.end()) it = by_shape.emplace(key, standard_classes(like, s, tma_ok)).first;
    ASSERT_GE(it->second.size(), 2u) << c.to_json();
    for (const ProblemClass& pc : it->second) {
      seen["ragged_m"] += pc.ragged_m;
      seen["ragged_n"] += pc.ragged_n;
      seen["k_tail"] += pc.k_tail;
      seen["multi_tile"] += pc.multi_tile;
      seen["idle_cta"] += pc.idle_cta;
      seen["cluster"] += pc.cluster;
      seen["single_tile"] += !pc.multi_tile;
    }
  });
  for (const char* flag : {"ragged_m", "ragged_n", "k_tail", "multi_tile", "idle_cta", "cluster", "single_tile"})
    EXPECT_GT(seen[flag], 0) << flag;
}

}  // namespace
}  // namespace mgpu::kernels
