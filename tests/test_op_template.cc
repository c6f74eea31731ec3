// The op-template face (kernels/op_template.h) as the attention template implements it: the
// problem from command-line values (defaults, what is left out, errors naming the flag), the
// key round trip and the fields the store keeps, validity agreeing with the kernel's own
// rules, the registry, the verification classes, and the cost model's schedule past the CTAs
// it simulates one by one.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "core/error.h"
#include "kernels/attention/cost_model.h"
#include "kernels/attention/template.h"
#include "kernels/op_registry.h"

namespace mgpu::kernels {
namespace {

const OpTemplate& attention() { return op_template("attention", core::parse_arch("sm_90a")); }

std::map<std::string, std::string> defaults(const OpTemplate& t) {
  std::map<std::string, std::string> v;
  for (const ProblemFlag& f : t.problem_flags())
    if (!f.is_switch) v[f.name] = f.default_value;
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput) << e.what();
    return e.what();
  }
  return "";
}

TEST(OpTemplate, AttentionProblemFromFlagsWithWhatIsLeftOut) {
  const OpTemplate& t = attention();
  EXPECT_EQ(t.problem(defaults(t)).key, "b1_h32_kvh32_sq4096_skv4096_d128_bf16_noncausal");
  auto v = defaults(t);
  v["heads"] = "8";
  v["seq-q"] = "1000";
  v["causal"] = "true";
  v["dtype"] = "f16";
  // K/V heads and keys left out: multi-head self-attention.
  EXPECT_EQ(t.problem(v).key, "b1_h8_kvh8_sq1000_skv1000_d128_f16_causal");
  v["kv-heads"] = "2";
  v["seq-kv"] = "333";
  const Problem p = t.problem(v);
  EXPECT_EQ(p.key, "b1_h8_kvh2_sq1000_skv333_d128_f16_causal");
  EXPECT_EQ(p.op, "attention");
  EXPECT_EQ(p.dtype, "f16");
  const attention::AttentionProblem a = attention::parse_attention_key(p.key);
  EXPECT_DOUBLE_EQ(p.flops, a.flops());
  EXPECT_DOUBLE_EQ(p.bytes, a.min_bytes());
  ASSERT_EQ(p.fields.size(), 8u);
  EXPECT_EQ(p.fields[2], (std::pair<std::string, std::string>{"kv_heads", "2"}));
  EXPECT_EQ(p.fields[7], (std::pair<std::string, std::string>{"causal", "true"}));
  EXPECT_EQ(t.problem_from_key(p.key), p);
}

TEST(OpTemplate, BadProblemValuesNameTheirFlag) {
  const OpTemplate& t = attention();
  auto with = [&](std::string flag, std::string value) {
    auto v = defaults(t);
    v[flag] = value;
    return error_of([&] { t.problem(v); });
  };
  EXPECT_NE(with("seq-q", "0").find("--seq-q must be a whole number from 1 to 2147483647, got '0'"), std::string::npos);
  EXPECT_NE(with("batch", "-3").find("--batch"), std::string::npos);
  EXPECT_NE(with("heads", "12x").find("--heads"), std::string::npos);
  EXPECT_NE(with("head-dim", "96").find("--head-dim must be one of 64, 128, 256, got '96'"), std::string::npos);
  EXPECT_NE(with("dtype", "f32").find("--dtype must be one of bf16, f16"), std::string::npos);
  EXPECT_NE(with("kv-heads", "5").find("multiple of kv_heads"), std::string::npos);
  EXPECT_NE(error_of([&] { t.problem_from_key("b1_h1"); }).find("bad attention key"), std::string::npos);
}

TEST(OpTemplate, ValidityIsTheKernelsOwnRules) {
  const OpTemplate& t = attention();
  auto v = defaults(t);
  v["head-dim"] = "256";
  const Problem p = t.problem(v);
  int valid = 0, total = 0;
  t.space().enumerate([&](const core::TuningConfig& c) {
    ++total;
    const auto ours = t.why_invalid(p, c);
    const auto kernel = attention::why_invalid(attention::attention_problem(p), attention::attention_config(c));
    ASSERT_EQ(ours.has_value(), kernel.has_value()) << c.to_json();
    if (ours) EXPECT_EQ(ours->rule, kernel->rule);
    valid += !ours;
  });
  EXPECT_EQ(total, 16);
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, total);  // head dim 256: block_kv 128 needs more registers than a consumer has
  core::TuningConfig fits = t.default_config();
  fits.set("block_kv", std::int64_t{64});
  t.require_valid(p, fits);
  EXPECT_NE(error_of([&] { t.require_valid(p, t.default_config()); }).find("invalid config (registers)"), std::string::npos);
  core::TuningConfig bad = t.default_config();
  bad.set("block_kv", std::int64_t{96});
  EXPECT_NE(error_of([&] { t.check_config(bad); }).find("block_kv"), std::string::npos);
  // The grid's y and z are heads and batch: CUDA takes 65535 at most.
  v = defaults(t);
  v["heads"] = "65536";
  v["kv-heads"] = "1";
  v["seq-q"] = "128";
  EXPECT_EQ(t.why_invalid(t.problem(v), t.default_config())->rule, "grid");
}

TEST(OpTemplate, TheRegistryFindsAttentionAndSaysWhatIsMissing) {
  EXPECT_EQ(attention().name(), "attention_sm90");
  EXPECT_EQ(attention().op(), "attention");
  EXPECT_FALSE(attention().source_hash().empty());
  EXPECT_NE(error_of([] { op_template("attention", core::parse_arch("sm_100a")); }).find("sm_90a"), std::string::npos);
  EXPECT_NE(error_of([] { op_template("convolution", core::parse_arch("sm_90a")); }).find("no op 'convolution'"),
            std::string::npos);
  bool listed = false;
  for (const OpEntry& e : ops()) listed = listed || e.op == "attention";
  EXPECT_TRUE(listed);
}

TEST(OpTemplate, ThreeVerificationClassesPerKernelFamily) {
  const OpTemplate& t = attention();
  auto v = defaults(t);
  v["causal"] = "true";
  v["head-dim"] = "64";
  const std::vector<VerificationProblem> classes = t.verification_problems(t.problem(v), t.default_config(), 132);
  ASSERT_EQ(classes.size(), 3u);
  std::set<std::string> names;
  bool rows_without_keys = false, gqa = false;
  for (const VerificationProblem& c : classes) {
    names.insert(c.problem_class);
    EXPECT_EQ(c.problem_class.find(';'), std::string::npos);  // ';' joins classes in the store
    EXPECT_NE(c.problem_class.find("d64_bf16_causal"), std::string::npos) << c.problem_class;
    const attention::AttentionProblem a = attention::attention_problem(c.problem);
    rows_without_keys = rows_without_keys || a.seq_q > a.seq_kv;
    gqa = gqa || a.kv_heads < a.heads;
    EXPECT_EQ(a.head_dim, 64);
    EXPECT_TRUE(a.causal);
  }
  EXPECT_EQ(names.size(), 3u);
  EXPECT_TRUE(rows_without_keys);
  EXPECT_TRUE(gqa);
  // Every kernel family is one of the kernel problems: 3 head dims x 2 dtypes x 2 masks.
  EXPECT_EQ(t.kernel_problems().size(), 12u);
}

TEST(OpTemplate, TheCostModelPastTheSimulatedCtasContinuesTheSimulatedOnes) {
  // 2^20 CTAs are scheduled one by one; one head more is past that and takes the converged
  // balance. The two predictions must differ by about the work added, not jump.
  attention::AttentionProblem p;
  p.batch = 1, p.seq_q = p.seq_kv = 128 * 128, p.head_dim = 128;
  p.heads = p.kv_heads = 8192;
  const attention::AttentionConfig c{64, 128, 2};
  const core::DeviceSpec& h100 = core::parse_arch("sm_90a").default_device();
  const double simulated = attention::predict_attention(p, c, h100).total_ms;
  p.heads = p.kv_heads = 8193;
  const double converged = attention::predict_attention(p, c, h100).total_ms;
  EXPECT_NEAR(converged / simulated, 8193.0 / 8192.0, 0.01);
  // The largest problem the grid takes is predicted (it once walked 2^41 CTAs).
  p.heads = p.kv_heads = 65535;
  p.batch = 65535;
  p.seq_q = p.seq_kv = 1 << 20;
  p.head_dim = 64;
  EXPECT_TRUE(std::isfinite(attention::predict_attention(p, {64, 64, 2}, h100).total_ms));
}

}  // namespace
}  // namespace mgpu::kernels
