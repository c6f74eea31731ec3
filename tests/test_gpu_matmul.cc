// On a Hopper GPU: the matmul template computes C = A . B correctly for both B layouts,
// clustered and not, ragged shapes included, against a float64 reference, with C poisoned
// (NaN) before the run and fresh random inputs per case. Skips without an sm_90 GPU.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/cuda_kernel.h"
#include "core/prepared_launch.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/kernel.h"
#include "kernels/matmul_sm90/validity.h"
#include "kernels/matmul_template.h"
#include "tests/support/gpu_test.h"
#include "tests/support/matmul_cases.h"
#include "tests/support/matmul_on_device.h"

namespace mgpu::kernels {
namespace {


using ::mgpu::testing::MatmulCase;
using ::mgpu::testing::matmul_error_of_kernel;
using ::mgpu::testing::matmul_error_on_device;
using Case = MatmulCase;

class GpuMatmul : public ::mgpu::testing::HopperGpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(GpuMatmul, MatchesAFloat64Reference) {
  double rel = matmul_error_on_device(GetParam().problem, GetParam().config, sm_count_, 17);
  EXPECT_LT(rel, 1e-2) << GetParam().config;
  rel = matmul_error_on_device(GetParam().problem, GetParam().config, sm_count_, 99);  // fresh inputs: the same function on other data
  EXPECT_LT(rel, 1e-2) << GetParam().config;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuMatmul, ::testing::ValuesIn(::mgpu::testing::gpu_matmul_cases()));

// Issue 17: validity and the device agree. For each rule whose rejected configs still build,
// a config it rejects is built anyway and run: it must not pass (the launch is refused, a
// checker reports, or the answer is wrong). Registers (spills, a speed rule) are shown in
// compile_matmul_sm90. Only on the virtual device: a rejected
// kernel may take a GPU's context down with it -- and the virtual device's too, as a hang
// does, so each case is a test of its own, run in its own process (tests/CMakeLists.txt). The
// multicast rule is gone: it rejected configs that run correctly (kHalvesOffPattern64/32 in
// gpu_matmul_cases()), see validity.cc.
struct Rejected {
  std::string rule;
  BLayout layout;
  std::string config;  // fields left out take the defaults
};
void PrintTo(const Rejected& r, std::ostream* os) { *os << r.rule << " " << r.config; }

class GpuMatmulRejected : public ::mgpu::testing::HopperGpuTest, public ::testing::WithParamInterface<Rejected> {};

TEST_P(GpuMatmulRejected, ReallyFails) {
  if (!core::CudaDriver::get().emulated()) GTEST_SKIP() << "runs rejected kernels: on the virtual device only";
  {
    const Rejected& r = GetParam();
    MatmulProblem p{.m = 520, .n = 392, .k = 264, .b_layout = r.layout};  // ragged, several tiles per CTA
    nlohmann::json full = nlohmann::json::parse(sm90::MatmulConfig{}.to_tuning_config().to_json());
    full.update(nlohmann::json::parse(r.config));
    sm90::MatmulConfig c = sm90::MatmulConfig::from_tuning_config(core::TuningConfig::from_json(full.dump()));
    auto why = sm90::why_invalid(p, c, core::parse_arch("sm_90a"));
    ASSERT_TRUE(why.has_value()) << r.config;
    ASSERT_EQ(why->rule, r.rule) << why->reason;
    const std::string json = c.to_tuning_config().to_json();
    bool failed = false;
    std::string how;
    try {
      double rel = matmul_error_of_kernel(p, sm90::build_matmul_unchecked(p, c), json, sm_count_, 5);
      failed = !(rel < 1e-2);
      how = "relative error " + std::to_string(rel);
    } catch (const std::exception& e) {
      failed = true;
      how = e.what();
    }
    EXPECT_TRUE(failed) << r.rule << " rejected " << json << " but it ran correctly";
    std::printf("%s rule: %s fails: %s\n", r.rule.c_str(), json.c_str(), how.substr(0, 240).c_str());
  }
}

// tests/CMakeLists.txt runs case i as Rules/GpuMatmulRejected.ReallyFails/i: keep the count there.
// (The split_k rules on k-steps and workspace are not here: a launch holds the count to what
// the shape can use -- GpuMatmul.ASplitCountTheShapeCannotUseIsHeldToWhatItCan -- so those
// configs run correctly, as the launch of the lower count they are rejected as duplicates of.)
INSTANTIATE_TEST_SUITE_P(
    Rules, GpuMatmulRejected,
    ::testing::Values(
        Rejected{"shape", BLayout::NK, R"({"tile_k":48})"},  // 96-byte K rows: no swizzle width (it passed until 2026-11-23)
        Rejected{"epilogue", BLayout::KN, R"({"tile_n":64,"epi_tile_n":128})"},  // no whole piece fits the tile
        Rejected{"smem", BLayout::KN, R"({"max_concurrent_steps":6})"},          // 6 x 48 KiB stages + epilogue
        // A cluster's CTAs multicast one operand for the same k-steps; split ranges differ.
        Rejected{"split_k", BLayout::NK, R"({"tile_m":64,"schedule":"split_k","split_k":2,"cluster_dimension":"N"})"},
        Rejected{"stream_k", BLayout::KN, R"({"tile_m":64,"schedule":"stream_k","cluster_dimension":"M"})"}));
// (The consumers rules are not here: pingpong with wg_dimension N is the M kernel, and pingpong
// with partial tiles is refused by the builder itself -- MatmulSm90Validity.PingPongRules...)


// Issue 19: the epilogue stages C in swizzled column atoms (kernel.cc), so its fragment stores
// hit 32 distinct banks per wavefront for every output type and piece width. Until
// 2026-11-23 the staging was unswizzled row-major: 3,584 extra wavefronts in 512 stores (8-way)
// for the default config. The main loop moves data by TMA and wgmma only, so these stores are
// all the kernel's counted shared-memory accesses. Virtual device only: a GPU has no counter here.
using GpuMatmulVirtual = ::mgpu::testing::HopperGpuTest;

// A split config tuned at a long K, run where K has fewer steps than ranges or the workspace
// bound allows fewer (what an export's nearest-shape lookup may hand a shape it was not tuned
// on): the launch passes effective_split_k() and the answer is right.
TEST_F(GpuMatmulVirtual, ASplitCountTheShapeCannotUseIsHeldToWhatItCan) {
  sm90::MatmulConfig c;
  c.tile_m = 64;
  c.schedule = sm90::Schedule::SplitK;
  c.split_k = 8;
  for (MatmulProblem p : {MatmulProblem{.m = 300, .n = 392, .k = 264},  // 5 k-steps: 5 ranges
                          MatmulProblem{.m = 1000, .n = 2048, .k = 1024, .b_layout = BLayout::NK}}) {  // 32 MiB: 3
    auto why = sm90::why_invalid(p, c, core::parse_arch("sm_90a"));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->rule, "split_k") << why->reason;
    const int held = sm90::effective_split_k(p, c);
    EXPECT_LT(held, 8);
    EXPECT_GE(held, 2);
    const std::string json = c.to_tuning_config().to_json();
    double rel = matmul_error_of_kernel(p, sm90::build_matmul_unchecked(p, c), json, sm_count_, 7);
    EXPECT_LT(rel, 1e-2) << p.key() << " at split_k " << held;
  }
}

TEST_F(GpuMatmulVirtual, EpilogueStagingStoresHaveNoBankConflicts) {
  if (!core::CudaDriver::get().emulated()) GTEST_SKIP() << "counts banks on the virtual device only";
  for (DType out : {DType::BF16, DType::F16, DType::F32})
    for (int epi_n : {16, 32, 64, 128}) {
      MatmulProblem p{.m = 256, .n = 256, .k = 128, .out_dtype = out, .b_layout = BLayout::NK};
      sm90::MatmulConfig c;
      c.epi_tile_n = epi_n;
      if (out == DType::F32 && epi_n == 128) c.max_concurrent_steps = 3;  // the f32 pieces' SMEM
      if (sm90::why_invalid(p, c, core::parse_arch("sm_90a"))) continue;  // f32 needs 32-byte rows
      const std::string json = c.to_tuning_config().to_json();
      double rel = matmul_error_of_kernel(p, sm90::build_matmul(p, c, core::parse_arch("sm_90a")), json, sm_count_, 3);
      EXPECT_LT(rel, 1e-2) << json;
      nlohmann::json banks = nlohmann::json::parse(core::CudaDriver::get().last_emulated_launch())["bank_conflicts"];
      EXPECT_GT(banks.value("accesses", 0), 0) << json;  // the staging stores were counted
      EXPECT_EQ(banks.value("conflicts", -1), 0) << json << " " << to_string(out) << " " << banks.dump().substr(0, 400);
    }
}

}  // namespace
}  // namespace mgpu::kernels
