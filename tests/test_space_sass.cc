// The batched proof of a space's kernels (tests/support/space_sass.h): a kernel proved in a
// batch carries what the compiler's own build of it alone carries, and the check that makes the
// batching sound can tell two kernels apart.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/arch.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/kernel.h"
#include "tests/support/space_sass.h"

namespace mgpu::testing {
namespace {

using kernels::MatmulProblem;
using kernels::sm90::MatmulConfig;

const core::ArchSpec& hopper() { return core::parse_arch("sm_90a"); }

TEST(SpaceSass, RenamingTouchesTheEntryAndItsParametersOnly) {
  const std::string ptx =
      ".visible .entry matmul(\n .param .u64 matmul_param_0\n)\n{\n ld.param.u64 %rd1, [matmul_param_0];\n"
      " mov.u32 %r1, matmul_other;\n call matmulx;\n}\n";
  const std::string out = rename_entry(ptx, "matmul", "k7");
  EXPECT_NE(out.find(".entry k7("), std::string::npos);
  EXPECT_NE(out.find("[k7_param_0]"), std::string::npos);
  EXPECT_NE(out.find(".param .u64 k7_param_0"), std::string::npos);
  EXPECT_NE(out.find("matmul_other"), std::string::npos);  // another name that starts alike
  EXPECT_NE(out.find("matmulx"), std::string::npos);
  EXPECT_EQ(out.find("matmul("), std::string::npos);
}

TEST(SpaceSass, ABatchedKernelIsTheKernelTheCompilerBuildsAlone) {
  // Three kernels that differ (tile_n, pipeline depth, consumers), in batches of two: the first
  // of each batch is assembled alone as the check, the other in its batch.
  std::vector<std::string> texts;
  for (const char* json : {R"({"tile_n":128})", R"({"tile_n":64,"max_concurrent_steps":3})",
                           R"({"consumers":"pingpong"})"}) {
    core::TuningConfig t = MatmulConfig{}.to_tuning_config();
    const core::TuningConfig given = core::TuningConfig::from_json(json);
    for (const auto& [k, v] : given.values()) t.set(k, v);
    texts.push_back(kernels::sm90::build_matmul(MatmulProblem{}, MatmulConfig::from_tuning_config(t), hopper()).mlir);
  }
  std::vector<const std::string*> ptrs;
  for (const std::string& t : texts) ptrs.push_back(&t);
  const auto batched = prove_kernels(ptrs, hopper(), /*batch=*/2);
  const auto alone = prove_kernels(ptrs, hopper(), /*batch=*/1);
  ASSERT_EQ(batched.size(), 3u);
  int batched_count = 0;
  for (const std::string& t : texts) {
    const KernelProof& b = batched.at(t);
    const KernelProof& a = alone.at(t);
    ASSERT_EQ(b.error, "");
    ASSERT_EQ(a.error, "");
    EXPECT_TRUE(a.alone);
    batched_count += !b.alone;
    EXPECT_EQ(b.ptx, a.ptx);
    EXPECT_EQ(b.resources.registers, a.resources.registers);
    EXPECT_EQ(b.resources.spill_store_bytes, a.resources.spill_store_bytes);
    EXPECT_EQ(b.profile.function, a.profile.function);
    EXPECT_EQ(b.profile.whole.instructions, a.profile.whole.instructions);
    EXPECT_EQ(b.profile.main_loop.mma, a.profile.main_loop.mma);
    EXPECT_EQ(b.profile.whole.setmaxnreg, a.profile.whole.setmaxnreg);
    EXPECT_GT(b.profile.whole.instructions, 0);
  }
  EXPECT_EQ(batched_count, 1);  // batch {0, 1}: 1 in it; batch {2}: a batch of one is built alone
}

TEST(SpaceSass, TheListingCheckTellsDifferentKernelsApart) {
  // What would catch a batch that assembled a kernel differently: listings that differ in one
  // branch target differ, while a listing equals itself renamed and its labels renumbered.
  const std::string listing = ".global matmul\n//--------------------- .text.matmul --\n.L_x_9:\n BRA `(.L_x_9) ;\n";
  const std::string renamed = ".global k\n//--------------------- .text.k --\n.L_x_3:\n BRA `(.L_x_3) ;\n";
  const std::string other = ".global k\n//--------------------- .text.k --\n.L_x_3:\n BRA `(.L_x_4) ;\n";
  EXPECT_EQ(neutral_listing(listing, "matmul"), neutral_listing(renamed, "k"));
  EXPECT_NE(neutral_listing(listing, "matmul"), neutral_listing(other, "k"));
  EXPECT_EQ(neutral_listing(listing, "absent"), "");
  // ptxas numbers the internal subroutines it calls per module (stream-K's 64-bit division):
  // a kernel's call in a batch names another number than alone, for the same code.
  const std::string alone = "//--------------------- .text.matmul --\n CALL.REL.NOINC `($__internal_0_$__cuda_sm20_div_u64) ;\n";
  const std::string batched = "//--------------------- .text.k --\n CALL.REL.NOINC `($__internal_7_$__cuda_sm20_div_u64) ;\n";
  EXPECT_EQ(neutral_listing(alone, "matmul"), neutral_listing(batched, "k"));
}

}  // namespace
}  // namespace mgpu::testing
