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
// kernel may take a GPU's context down with it. The multicast rule is gone: it rejected
// configs that run correctly (kHalvesOffPattern64/32 in gpu_matmul_cases()), see validity.cc.
using GpuMatmulRejected = ::mgpu::testing::HopperGpuTest;

TEST_F(GpuMatmulRejected, AConfigEachRuleRejectsReallyFails) {
  if (!core::CudaDriver::get().emulated()) GTEST_SKIP() << "runs rejected kernels: on the virtual device only";
  struct Rejected {
    std::string rule;
    BLayout layout;
    std::string config;  // fields left out take the defaults
  };
  const std::vector<Rejected> cases = {
      {"shape", BLayout::NK, R"({"tile_k":48})"},  // 96-byte K rows: no swizzle width (it passed until 2026-11-23)
      {"epilogue", BLayout::KN, R"({"tile_n":64,"epi_tile_n":128})"},  // no whole piece fits the tile
      {"smem", BLayout::KN, R"({"max_concurrent_steps":6})"},          // 6 x 48 KiB stages + epilogue
  };
  for (const Rejected& r : cases) {
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


// Issue 19: the epilogue stages C in swizzled column atoms (kernel.cc), so its fragment stores
// hit 32 distinct banks per wavefront for every output type and piece width. Until
// 2026-11-23 the staging was unswizzled row-major: 3,584 extra wavefronts in 512 stores (8-way)
// for the default config. The main loop moves data by TMA and wgmma only, so these stores are
// all the kernel's counted shared-memory accesses. Virtual device only: a GPU has no counter here.
TEST_F(GpuMatmulRejected, EpilogueStagingStoresHaveNoBankConflicts) {
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
