// The matmul templates behind the op face (kernels/matmul_op.h): the face is the template (name,
// hash, space, problems by the matmul command's flag names); its verification problem is the
// matmul verifier's proxy of the config's class; and a config proven through the op-generic
// measurer on the virtual device passes, while its faulty twins are caught: the kernel built for
// an f16 output launched where bf16 is read back (a wrong result, by the reference), and one
// built for B stored N x K launched on a K x N problem (its TMA boxes never fill the barrier's
// expected bytes: a deadlock).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "core/error.h"
#include "harness/measure/op_measurer.h"
#include "kernels/matmul_op.h"
#include "kernels/matmul_template.h"
#include "kernels/problem_class.h"
#include "tests/support/forwarding_op_template.h"

namespace mgpu::harness {
namespace {

const core::ArchSpec& sm90() { return core::parse_arch("sm_90a"); }

std::map<std::string, std::string> flags(std::string m, std::string n, std::string k) {
  return {{"m", m}, {"n", n}, {"k", k}, {"dtype", "bf16"}, {"out-dtype", ""}, {"layout", "kn"}};
}

TEST(MatmulOp, TheFaceIsTheTemplate) {
  const kernels::OpTemplate& op = kernels::matmul_op(sm90());
  const kernels::MatmulTemplate& t = kernels::matmul_template(sm90());
  EXPECT_EQ(op.op(), "matmul");
  EXPECT_EQ(op.name(), t.name());
  EXPECT_EQ(op.source_hash(), t.source_hash());
  EXPECT_EQ(op.default_config().to_json(), t.default_config().to_json());
  EXPECT_EQ(&kernels::matmul_op(sm90()), &op);  // one face per template
  EXPECT_EQ(kernels::matmul_op(core::parse_arch("sm_100a")).name(), "matmul_sm100");

  const kernels::Problem p = op.problem(flags("200", "136", "72"));
  EXPECT_EQ(p.key, "m200_n136_k72_bf16_bf16_kn");  // --out-dtype left out: the input dtype
  EXPECT_EQ(op.problem_from_key(p.key), p);
  EXPECT_DOUBLE_EQ(p.flops, 2.0 * 200 * 136 * 72);
  auto f = flags("200", "136", "72");
  f["out-dtype"] = "f32";
  f["layout"] = "nk";
  EXPECT_EQ(op.problem(f).key, "m200_n136_k72_bf16_f32_nk");
  try {
    op.problem(flags("0", "1", "1"));
    ADD_FAILURE() << "m = 0 taken";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("--m"), std::string::npos) << e.what();
  }
  // Validity is the template's, rule for rule.
  const kernels::MatmulProblem mp = kernels::matmul_problem_of(p);
  int compared = 0;
  t.space().enumerate([&](const core::TuningConfig& c) {
    if (compared++ >= 400) return;
    const auto a = op.why_invalid(p, c), b = t.why_invalid(mp, c);
    EXPECT_EQ(a.has_value(), b.has_value()) << c.to_json();
    if (a && b) EXPECT_EQ(a->rule, b->rule);
  });
}

TEST(MatmulOp, TheVerificationProblemIsTheVerifiersProxyOfTheConfigsClass) {
  const kernels::OpTemplate& op = kernels::matmul_op(sm90());
  const kernels::MatmulTemplate& t = kernels::matmul_template(sm90());
  auto f = flags("3000", "1000", "776");
  f["dtype"] = "f16";
  f["out-dtype"] = "f32";
  f["layout"] = "nk";
  const kernels::Problem target = op.problem(f);
  const core::TuningConfig c = op.default_config();
  const auto v = op.verification_problems(target, c, 132);
  ASSERT_EQ(v.size(), 1u);
  const kernels::MatmulProblem mp = kernels::matmul_problem_of(target);
  const kernels::KernelShape s = t.kernel_shape(c);
  EXPECT_EQ(v[0].problem_class, kernels::classify(mp, s, 132).key());
  const auto proxy = kernels::verification_proxy(mp, s, 132, [&](const kernels::MatmulProblem& q) { return t.accepts(q); });
  ASSERT_TRUE(proxy);
  EXPECT_TRUE(v[0].unrunnable_why.empty());
  EXPECT_EQ(v[0].problem.key, proxy->problem.key());
  EXPECT_EQ(v[0].sm_count, proxy->sm_count);
  const kernels::MatmulProblem small = kernels::matmul_problem_of(v[0].problem);
  EXPECT_EQ(small.in_dtype, kernels::DType::F16);  // the kernel the target builds: same dtypes, layout
  EXPECT_EQ(small.out_dtype, kernels::DType::F32);
  EXPECT_EQ(small.b_layout, kernels::BLayout::NK);
  EXPECT_LT(small.flops(), mp.flops());
}

class MatmulOpOnTheVirtualDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("MGPU_CUDA_DRIVER", MGPU_VCUDA_LIB, 1); }
};

// The real face, but its kernels are built for a problem `mutate` changed.
class MisBuilt final : public test::ForwardingOpTemplate {
 public:
  explicit MisBuilt(void (*mutate)(kernels::MatmulProblem&)) : ForwardingOpTemplate(kernels::matmul_op(sm90())), mutate_(mutate) {}
  std::string build_mlir(const kernels::Problem& p, const core::TuningConfig& c) const override {
    kernels::MatmulProblem m = kernels::matmul_problem_of(p);
    mutate_(m);
    return real().build_mlir(kernels::generic_problem(m), c);
  }

 private:
  void (*mutate_)(kernels::MatmulProblem&);
};

TEST_F(MatmulOpOnTheVirtualDevice, AConfigProvenAtItsClassPassesAndItsMisBuiltTwinsAreCaught) {
  const kernels::OpTemplate& op = kernels::matmul_op(sm90());
  const kernels::Problem target = op.problem(flags("4096", "4096", "4104"));  // a K tail
  TrialRequest r;
  r.arch = "sm_90a";
  r.op = "matmul";
  r.config = op.default_config();
  r.measurer = "model";
  r.problem_key = target.key;
  const std::string hash = measure_op_trial(r, op).kernel_hash;
  ASSERT_FALSE(hash.empty());
  const auto v = op.verification_problems(target, r.config, 132);
  ASSERT_EQ(v.size(), 1u);
  ASSERT_TRUE(v[0].unrunnable_why.empty());
  r.measurer = "emulate";
  r.seeds = 2;
  r.problem_key = v[0].problem.key;
  r.sm_count = v[0].sm_count;
  const Measurement m = measure_op_trial(r, op);
  EXPECT_EQ(m.status, TrialStatus::Ok) << m.message;
  EXPECT_EQ(m.source, "emulate");
  EXPECT_NE(m.message.find("verified under 2 schedules"), std::string::npos) << m.message;
  EXPECT_EQ(m.kernel_hash, hash);  // the class's problem builds the target's kernel
  ASSERT_TRUE(m.verification_error);
  EXPECT_LE(*m.verification_error, 1.0);
  r.seeds = 1;
  const Measurement f16 = measure_op_trial(r, MisBuilt([](kernels::MatmulProblem& m) { m.out_dtype = kernels::DType::F16; }));
  EXPECT_EQ(f16.status, TrialStatus::WrongResult) << f16.message;
  EXPECT_NE(f16.message.find("relative Frobenius error of C"), std::string::npos) << f16.message;
  const Measurement nk = measure_op_trial(r, MisBuilt([](kernels::MatmulProblem& m) { m.b_layout = kernels::BLayout::NK; }));
  EXPECT_EQ(nk.status, TrialStatus::Deadlock) << nk.message;
}

}  // namespace
}  // namespace mgpu::harness
