// An op's trials through the op-generic measurer (harness/measure/op_measurer.h) on the
// virtual device, the path `mgpu-tune attention --device emulate` and every verification take:
// the attention kernel passes; its faulty twins -- the rescale of O without a wgmma.fence, a K/V
// stage released before the wgmma reading it retired, a causal mask one key too wide -- are
// each caught; the model's prediction and an invalid config come back as such.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "harness/measure/op_measurer.h"
#include "kernels/attention/device_run.h"
#include "kernels/attention/template.h"
#include "kernels/op_registry.h"
#include "tests/support/forwarding_op_template.h"

namespace mgpu::harness {
namespace {

using kernels::attention::AttentionFaults;

class OpTrials : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("MGPU_CUDA_DRIVER", MGPU_VCUDA_LIB, 1); }
};

// The registered attention template, built with faults: everything else is the real one's.
class FaultyAttention final : public test::ForwardingOpTemplate {
 public:
  explicit FaultyAttention(AttentionFaults f)
      : ForwardingOpTemplate(kernels::op_template("attention", core::parse_arch("sm_90a"))), f_(f) {}
  std::string build_mlir(const kernels::Problem& p, const core::TuningConfig& c) const override {
    return kernels::attention::build_attention_sm90(kernels::attention::attention_problem(p),
                                                    kernels::attention::attention_config(c), f_)
        .mlir;
  }

 private:
  AttentionFaults f_;
};

TrialRequest request(const std::string& key, int block_kv, int stages, int seeds, const std::string& measurer = "emulate") {
  TrialRequest r;
  r.arch = "sm_90a";
  r.op = "attention";
  r.problem_key = key;
  r.config.set("block_q", std::int64_t{64});
  r.config.set("block_kv", std::int64_t{block_kv});
  r.config.set("max_concurrent_steps", std::int64_t{stages});
  r.config.set("consumer_schedule", std::string("serial"));
  r.measurer = measurer;
  r.seeds = seeds;
  return r;
}

TEST_F(OpTrials, TheKernelIsVerifiedUnderSeveralSchedules) {
  const Measurement m = measure_op_trial(request("b1_h4_kvh2_sq150_skv200_d64_bf16_causal", 64, 2, 2));
  EXPECT_EQ(m.status, TrialStatus::Ok) << m.message;
  EXPECT_EQ(m.source, "emulate");
  EXPECT_NE(m.message.find("verified under 2 schedules"), std::string::npos) << m.message;
  EXPECT_FALSE(m.kernel_hash.empty());
  ASSERT_TRUE(m.verification_error);
  EXPECT_LE(*m.verification_error, 1.0);  // the worst error over its tolerance
}

TEST_F(OpTrials, TheRescaleWithoutAFenceIsAHazard) {
  AttentionFaults f;
  f.no_fence_after_rescale = true;
  const Measurement m = measure_op_trial(request("b1_h1_kvh1_sq128_skv192_d64_bf16_noncausal", 64, 2, 1), FaultyAttention(f));
  EXPECT_EQ(m.status, TrialStatus::Hazard) << m.message;
  EXPECT_NE(m.message.find("fence"), std::string::npos) << m.message;
  // Its correct twin passes at the same problem.
  EXPECT_EQ(measure_op_trial(request("b1_h1_kvh1_sq128_skv192_d64_bf16_noncausal", 64, 2, 1), FaultyAttention({})).status,
            TrialStatus::Ok);
}

TEST_F(OpTrials, AStageReleasedBeforeItsWgmmaRetiredIsCaught) {
  AttentionFaults f;
  f.release_before_retire = true;
  // Four schedules: the checker sees it when the producer's next load lands before the wgmma
  // retired, which the late-async schedules (seed 4, 8, ...) arrange.
  const Measurement m = measure_op_trial(request("b1_h1_kvh1_sq128_skv256_d64_bf16_noncausal", 64, 1, 4), FaultyAttention(f));
  EXPECT_NE(m.status, TrialStatus::Ok) << m.message;
}

TEST_F(OpTrials, ACausalMaskOneKeyTooWideIsAWrongResult) {
  AttentionFaults f;
  f.causal_off_by_one = true;
  const Measurement m = measure_op_trial(request("b1_h1_kvh1_sq128_skv128_d64_bf16_causal", 64, 2, 1), FaultyAttention(f));
  EXPECT_EQ(m.status, TrialStatus::WrongResult) << m.message;
  EXPECT_NE(m.message.find("outside the tolerance"), std::string::npos) << m.message;
}

TEST_F(OpTrials, TheModelPredictsAndAnInvalidConfigIsSaid) {
  TrialRequest r = request("b1_h32_kvh32_sq8192_skv8192_d128_bf16_noncausal", 128, 2, 1, "model");
  r.compile = false;
  Measurement m = measure_op_trial(r);
  EXPECT_EQ(m.status, TrialStatus::Ok) << m.message;
  EXPECT_GT(m.median_ms, 0);
  r = request("b1_h1_kvh1_sq128_skv128_d256_bf16_noncausal", 128, 2, 1, "model");
  m = measure_op_trial(r);
  EXPECT_EQ(m.status, TrialStatus::InvalidConfig);
  EXPECT_NE(m.message.find("registers"), std::string::npos) << m.message;
}

TEST_F(OpTrials, VerificationProblemsBuildTheKernelOfTheProblemTuned) {
  // A verification is keyed by the binary: the classes must compile to the tuned problem's.
  const kernels::OpTemplate& t = kernels::op_template("attention", core::parse_arch("sm_90a"));
  const kernels::Problem p = t.problem_from_key("b2_h16_kvh4_sq4096_skv8192_d128_f16_causal");
  TrialRequest r = request(p.key, 128, 2, 1, "model");
  const std::string hash = measure_op_trial(r).kernel_hash;
  ASSERT_FALSE(hash.empty());
  for (const kernels::VerificationProblem& v : t.verification_problems(p, r.config, 132)) {
    r.problem_key = v.problem.key;
    EXPECT_EQ(measure_op_trial(r).kernel_hash, hash) << v.problem_class;
  }
}

}  // namespace
}  // namespace mgpu::harness
