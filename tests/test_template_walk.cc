// The walk of a template's space (MatmulTemplate::walk, ParamSpace::enumerate_changes): the
// typed walk updates a parsed config from the first changed parameter, so it must give every
// config the verdict why_invalid() gives the same config parsed whole.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/arch.h"
#include "core/tuning_config.h"
#include "kernels/matmul_template.h"

namespace mgpu::kernels {
namespace {

TEST(ParamSpace, EnumerateChangesNamesTheFirstParameterThatChanged) {
  const core::ParamSpace space({{"a", {std::int64_t{1}, std::int64_t{2}}, ""},
                                {"b", {std::string("x"), std::string("y"), std::string("z")}, ""},
                                {"c", {std::int64_t{7}, std::int64_t{8}}, ""}});
  std::vector<core::TuningConfig> seen;
  std::vector<size_t> first;
  space.enumerate_changes([&](const core::TuningConfig& c, size_t f) {
    seen.push_back(c);
    first.push_back(f);
  });
  ASSERT_EQ(seen.size(), space.size());
  EXPECT_EQ(first.front(), 0u);
  const char* names[] = {"a", "b", "c"};
  for (size_t i = 1; i < seen.size(); ++i) {
    ASSERT_LT(first[i], 3u);
    for (size_t d = 0; d < first[i]; ++d)  // before it: unchanged
      EXPECT_EQ(seen[i].values().at(names[d]), seen[i - 1].values().at(names[d])) << i;
    EXPECT_NE(seen[i].values().at(names[first[i]]), seen[i - 1].values().at(names[first[i]])) << i;
  }
  // The same configs, in the same order, as enumerate().
  size_t n = 0;
  space.enumerate([&](const core::TuningConfig& c) { EXPECT_EQ(c, seen.at(n++)); });
  EXPECT_EQ(n, seen.size());
}

std::vector<MatmulProblem> problems() {
  return {MatmulProblem{}, MatmulProblem{.m = 16, .n = 4096, .k = 8192},
          MatmulProblem{.m = 300, .n = 264, .k = 200, .out_dtype = DType::F32, .b_layout = BLayout::NK}};
}

// Every `stride`-th config's verdict from the walk against why_invalid() of the config itself.
void expect_walk_agrees(const MatmulTemplate& t, std::uint64_t stride) {
  for (const MatmulProblem& p : problems()) {
    std::uint64_t n = 0, compared = 0, valid = 0, rejected = 0;
    t.walk(p, [&](const core::TuningConfig& c, const Rejection* why) {
      (why ? rejected : valid) += 1;
      if (n++ % stride != 0) return;
      ++compared;
      const std::optional<Rejection> whole = t.why_invalid(p, c);
      ASSERT_EQ(why == nullptr, !whole.has_value()) << p.key() << " " << c.to_json();
      if (why) {
        EXPECT_EQ(why->rule, whole->rule) << c.to_json();
        EXPECT_EQ(why->reason, whole->reason) << c.to_json();
      }
    });
    EXPECT_EQ(n, t.space().size()) << p.key();
    EXPECT_GT(compared, 1000u) << p.key();
    EXPECT_GT(valid, 0u) << p.key();
    EXPECT_GT(rejected, 0u) << p.key();
  }
}

TEST(TemplateWalk, HopperVerdictsAreThoseOfTheConfigParsedWhole) {
  const MatmulTemplate& t = matmul_template(core::parse_arch("sm_90a"));
  expect_walk_agrees(t, 997);  // a prime: every parameter's values are reached
}

TEST(TemplateWalk, BlackwellVerdictsAreThoseOfTheConfigParsedWhole) {
  expect_walk_agrees(matmul_template(core::parse_arch("sm_100a")), 1);  // 3,600 configs: all
}

TEST(TemplateWalk, ValidConfigsAreThoseValidAtSomeProblemInWalkOrder) {
  // Hopper: split_k configs are valid at a decode shape and at no 4096^3 one.
  const MatmulTemplate& t = matmul_template(core::parse_arch("sm_90a"));
  const std::vector<MatmulProblem> ps = {MatmulProblem{}, MatmulProblem{.m = 16, .n = 4096, .k = 8192}};
  std::set<std::uint64_t> at_first, at_any;  // walk positions
  for (size_t i = 0; i < ps.size(); ++i) {
    std::uint64_t n = 0;
    t.walk(ps[i], [&](const core::TuningConfig&, const Rejection* why) {
      if (!why) (i == 0 ? at_first : at_any).insert(n);
      ++n;
    });
  }
  at_any.insert(at_first.begin(), at_first.end());
  ASSERT_LT(at_first.size(), at_any.size());  // the second problem adds configs
  std::vector<core::TuningConfig> first, any;
  std::uint64_t n = 0;
  t.space().enumerate([&](const core::TuningConfig& c) {
    if (at_first.count(n)) first.push_back(c);
    if (at_any.count(n)) any.push_back(c);
    ++n;
  });
  EXPECT_EQ(t.valid_configs({ps[0]}), first);
  EXPECT_EQ(t.valid_configs(ps), any);
  std::atomic<bool> stop{true};
  EXPECT_TRUE(t.valid_configs(ps, &stop).empty());
}

}  // namespace
}  // namespace mgpu::kernels
