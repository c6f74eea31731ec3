// A matmul config's launch preparation (kernels/matmul_run/device_run.h) through the CUDA driver
// API on the virtual device -- the path the verifier and the GPU measurer share: a ragged
// problem on 2 SMs (each CTA walks several tiles) is within bf16's threshold of the float64
// reference with no findings; its twin, the same preparation never launched, is refused (C is
// NaN poison); inputs are the same for every config of a problem and differ with the seed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/compiler.h"
#include "core/cuda_driver.h"
#include "kernels/matmul_run/device_run.h"
#include "kernels/matmul_template.h"

namespace mgpu::kernels {
namespace {

class MatmulOnTheVirtualDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("MGPU_CUDA_DRIVER", MGPU_VCUDA_LIB, 1); }
};

MatmulProblem ragged() {
  MatmulProblem p;
  p.m = 200;
  p.n = 136;
  p.k = 200;
  return p;
}

TEST_F(MatmulOnTheVirtualDevice, ARaggedProblemOnTwoSmsMatchesTheReferenceAndTheUnlaunchedTwinDoesNot) {
  const MatmulTemplate& t = matmul_template(core::parse_arch("sm_90a"));
  const MatmulProblem p = ragged();
  const core::TuningConfig c = t.default_config();
  ASSERT_FALSE(t.why_invalid(p, c));
  const core::BuiltKernel built = t.build(p, c);
  const core::CompileResult r = core::compile_module(built.mlir, t.arch());
  PreparedMatmul run(t, p, c, 1, r.units.at(0).ptx, r.units.at(0).cubin.image, /*sm_count=*/2, &built);
  PreparedMatmul never(t, p, c, 1, r.units.at(0).ptx, r.units.at(0).cubin.image, 2);
  run.launch();
  const double rel = run.relative_error_to_reference();
  EXPECT_LE(rel, verification_threshold(DType::BF16));
  EXPECT_GT(rel, 0.0);  // bf16 output rounds: an exact match would mean the reference saw C itself
  const nlohmann::json j = nlohmann::json::parse(core::CudaDriver::get().last_emulated_launch());
  for (const auto& rep : j.value("reports", nlohmann::json::array())) EXPECT_TRUE(rep.value("note", false)) << rep.dump();
  EXPECT_TRUE(std::isinf(never.relative_error_to_reference()));  // poison never passes
  EXPECT_EQ(run.output_bytes().size(), std::size_t(200 * 136 * 2));
  EXPECT_EQ(run.describe_byte(2 * (136 * 3 + 5)), "C[3][5]");
}

TEST(MatmulInputs, TheSameForEveryConfigOfAProblemAndNewWithTheSeed) {
  const MatmulProblem p = ragged();
  const MatmulInputs one = matmul_inputs(p), again = matmul_inputs(p, 1), other = matmul_inputs(p, 2);
  EXPECT_EQ(one.a, again.a);
  EXPECT_EQ(one.b, again.b);
  EXPECT_NE(one.a, other.a);
  // Seed 1 is the inputs trials have been measured with: A from the key's hash, B from the next seed.
  const std::uint64_t h = std::hash<std::string>{}(p.key());
  EXPECT_EQ(one.a, seeded_input(p.m * p.k, h, p.in_dtype));
  EXPECT_EQ(one.b, seeded_input(p.k * p.n, h + 1, p.in_dtype));
  for (std::uint16_t x : one.a) ASSERT_NE(x & 0x7fff, 0);  // never a zero
}

TEST(MatmulInputs, RelativeErrorIsInfiniteForANanAndZeroForAnExactCopy) {
  const std::vector<double> want = {1.0, -2.0};
  std::vector<std::uint8_t> exact(8), nan(8, 0xFF);
  const float w[2] = {1.0f, -2.0f};
  std::memcpy(exact.data(), w, 8);
  EXPECT_EQ(relative_error(exact, DType::F32, want), 0.0);
  EXPECT_TRUE(std::isinf(relative_error(nan, DType::F32, want)));
  EXPECT_LT(verification_threshold(DType::F32), verification_threshold(DType::F16));
  EXPECT_LT(verification_threshold(DType::F16), verification_threshold(DType::BF16));
}

}  // namespace
}  // namespace mgpu::kernels
