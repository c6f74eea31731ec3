// The virtual device's reproducibility check (harness/measure/emulator_verifier.cc): every
// schedule of a verification must give the first schedule's output bit for bit. Its faulty
// kernel is the split-K matmul whose last range sums the partials starting from its own, so
// the association -- and the rounding -- depends on which range finished last; its correct
// twin sums in split order whoever finishes last. Both give results well within the
// verification tolerance: only the bitwise comparison can tell them apart.
#include <gtest/gtest.h>

#include <string>

#include "core/arch.h"
#include "core/compiler.h"
#include "harness/measure/emulator_verifier.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/kernel.h"
#include "kernels/matmul_sm90/validity.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {
namespace {

using kernels::MatmulProblem;

Measurement verify(const MatmulProblem& p, const kernels::sm90::MatmulConfig& c, const core::BuiltKernel& k, int seeds,
                   int sm_count = 132) {
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  TrialRequest req;
  req.problem = p;
  req.config = c.to_tuning_config();
  req.measurer = "emulate";
  req.seeds = seeds;
  req.sm_count = sm_count;
  core::CompileResult r = core::compile_module(k.mlir, arch);
  return verify_on_emulator(req, kernels::matmul_template(arch), k, r.units.at(0).ptx);
}

kernels::sm90::MatmulConfig split_decode() {
  kernels::sm90::MatmulConfig c;
  c.swap_ab = true;
  c.tile_m = 16;
  c.tile_n = 64;
  c.wg_dimension = kernels::Dim::N;
  c.max_concurrent_steps = 3;
  c.schedule = kernels::sm90::Schedule::SplitK;
  c.split_k = 4;
  return c;
}

TEST(VerifyReproducible, ASumInArrivalOrderIsCaughtAndTheSplitOrderSumPasses) {
  const MatmulProblem p{.m = 16, .n = 512, .k = 1000};  // 4 tiles x 4 ranges, a K tail
  const kernels::sm90::MatmulConfig c = split_decode();
  ASSERT_FALSE(kernels::sm90::why_invalid(p, c, core::parse_arch("sm_90a")));

  Measurement twin = verify(p, c, kernels::sm90::build_matmul(p, c, core::parse_arch("sm_90a")), 8);
  EXPECT_EQ(twin.status, TrialStatus::Ok) << twin.message;

  Measurement faulty = verify(p, c, kernels::sm90::build_matmul_unchecked(p, c, {.sum_in_arrival_order = true}), 8);
  EXPECT_EQ(faulty.status, TrialStatus::WrongResult) << faulty.message;
  EXPECT_NE(faulty.message.find("not reproducible"), std::string::npos) << faulty.message;
  // What makes it a reproducibility finding: the faulty output passed the tolerance check.
  EXPECT_LT(faulty.verification_error, 1e-2) << faulty.message;
}

TEST(VerifyReproducible, StreamKTilesSharedByCtasAreSummedInSegmentOrder) {
  // Stream-K on 20 SMs: 64 k-steps in shares of 3 or 4, so each 16-step tile is cut among five
  // or six CTAs (on 132 SMs, 64 CTAs of one k-step: 16 segments per tile). The same faulty sum
  // is caught. (With two segments it would not be faulty: a + b is b + a, bit for bit.)
  const MatmulProblem p{.m = 16, .n = 512, .k = 1000};
  kernels::sm90::MatmulConfig c = split_decode();
  c.schedule = kernels::sm90::Schedule::StreamK;
  c.split_k = 1;
  ASSERT_FALSE(kernels::sm90::why_invalid(p, c, core::parse_arch("sm_90a")));
  for (int sms : {20, 132}) {
    Measurement twin = verify(p, c, kernels::sm90::build_matmul(p, c, core::parse_arch("sm_90a")), 8, sms);
    EXPECT_EQ(twin.status, TrialStatus::Ok) << sms << " SMs: " << twin.message;
    Measurement faulty =
        verify(p, c, kernels::sm90::build_matmul_unchecked(p, c, {.sum_in_arrival_order = true}), 8, sms);
    EXPECT_EQ(faulty.status, TrialStatus::WrongResult) << sms << " SMs: " << faulty.message;
    EXPECT_NE(faulty.message.find("not reproducible"), std::string::npos) << faulty.message;
  }
}

TEST(VerifyReproducible, OneScheduleComparesNothing) {
  // With one schedule there is nothing to compare: the faulty kernel's answer is within
  // tolerance, so it passes -- which is why verify's --seeds matters for split-K.
  const MatmulProblem p{.m = 16, .n = 512, .k = 1000};
  const kernels::sm90::MatmulConfig c = split_decode();
  Measurement one = verify(p, c, kernels::sm90::build_matmul_unchecked(p, c, {.sum_in_arrival_order = true}), 1);
  EXPECT_EQ(one.status, TrialStatus::Ok) << one.message;
}

}  // namespace
}  // namespace mgpu::harness
