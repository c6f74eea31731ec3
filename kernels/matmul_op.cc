#include "kernels/matmul_op.h"

#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/matmul_run/device_run.h"
#include "kernels/matmul_suites.h"
#include "kernels/matmul_template.h"
#include "kernels/problem_class.h"

namespace mgpu::kernels {

namespace {

using core::Error;
using core::ErrorKind;

constexpr std::int64_t kMaxSize = std::numeric_limits<std::int32_t>::max();  // validate()'s range

class MatmulOp final : public OpTemplate {
 public:
  explicit MatmulOp(const MatmulTemplate& t) : t_(t) {}

  std::string_view op() const override { return "matmul"; }
  std::string_view name() const override { return t_.name(); }
  std::string_view source_hash() const override { return t_.source_hash(); }
  const core::ArchSpec& arch() const override { return t_.arch(); }
  std::string_view description() const override {
    return "C = A . B: bf16/f16 inputs, f32 accumulation, bf16/f16/f32 output, B as K x N or N x K";
  }

  std::vector<ProblemFlag> problem_flags() const override {
    const MatmulProblem d;
    return {{"m", "Rows of A and C", std::to_string(d.m), false, {}, 1, kMaxSize},
            {"n", "Columns of B and C", std::to_string(d.n), false, {}, 1, kMaxSize},
            {"k", "Reduction dimension", std::to_string(d.k), false, {}, 1, kMaxSize},
            {"dtype", "Input dtype", "bf16", false, {"bf16", "f16"}, 0, 0},
            {"out-dtype", "Output dtype (default: --dtype)", "", false, {"bf16", "f16", "f32"}, 0, 0},
            {"layout", "Layout of B: kn (K x N row-major) or nk (N x K row-major, i.e. transposed)", "kn", false,
             {"kn", "nk"}, 0, 0}};
  }

  Problem problem(const std::map<std::string, std::string>& v) const override {
    MatmulProblem p;
    p.m = flag_integer(v, "m", 1, kMaxSize);
    p.n = flag_integer(v, "n", 1, kMaxSize);
    p.k = flag_integer(v, "k", 1, kMaxSize);
    p.in_dtype = parse_dtype(flag_choice(v, "dtype", {"bf16", "f16"}));
    std::map<std::string, std::string> filled = v;  // left out: the input dtype
    if (filled["out-dtype"].empty()) filled["out-dtype"] = std::string(to_string(p.in_dtype));
    p.out_dtype = parse_dtype(flag_choice(filled, "out-dtype", {"bf16", "f16", "f32"}));
    p.b_layout = parse_b_layout(flag_choice(v, "layout", {"kn", "nk"}));
    validate(p);
    t_.check_problem(p);
    return generic_problem(p);
  }
  Problem problem_from_key(std::string_view key) const override { return generic_problem(parse_matmul_key(key)); }

  core::ParamSpace space() const override { return t_.space(); }
  core::TuningConfig default_config() const override { return t_.default_config(); }
  std::optional<Rejection> why_invalid(const Problem& p, const core::TuningConfig& c) const override {
    return t_.why_invalid(matmul_problem_of(p), c);
  }
  std::string build_mlir(const Problem& p, const core::TuningConfig& c) const override {
    return t_.build(matmul_problem_of(p), c).mlir;
  }
  std::string kernel_name() const override { return "matmul"; }  // both builders' entry point
  double predict_ms(const Problem& p, const core::TuningConfig& c, const core::DeviceSpec& device) const override {
    return t_.predict_ms(matmul_problem_of(p), c, device);
  }

  // The kernel's code depends on the dtypes and B's layout (and the config); sizes are launch
  // values (the descriptors, the grid, the scalar arguments).
  std::vector<std::string> kernel_fields() const override { return {}; }
  std::vector<Problem> kernel_problems() const override {
    std::vector<Problem> out;
    for (DType in : {DType::BF16, DType::F16})
      for (DType o : {DType::BF16, DType::F16, DType::F32})
        for (BLayout l : {BLayout::KN, BLayout::NK}) {
          MatmulProblem p;
          p.m = p.n = p.k = 256;
          p.in_dtype = in, p.out_dtype = o, p.b_layout = l;
          if (t_.accepts(p)) out.push_back(generic_problem(p));
        }
    return out;
  }

  std::vector<VerificationProblem> verification_problems(const Problem& target, const core::TuningConfig& c,
                                                         int sm_count) const override {
    const MatmulProblem p = matmul_problem_of(target);
    const KernelShape s = t_.kernel_shape(c);
    const ProblemClass cls = classify(p, s, sm_count);
    const std::optional<ProxyProblem> proxy = proxy_for(p, s, cls, sm_count);
    VerificationProblem v;
    v.problem_class = cls.key();
    if (!proxy) {
      v.problem = target;
      v.unrunnable_why = fmt::format("no problem of class {} is small enough to emulate", v.problem_class);
      return {v};
    }
    v.problem = generic_problem(proxy->problem);
    v.sm_count = proxy->sm_count;
    return {v};
  }

  std::unique_ptr<PreparedRun> prepare(const Problem& p, const core::TuningConfig& c, std::uint64_t seed,
                                       const std::string& ptx, const std::string& cubin, int sm_count) const override {
    return std::make_unique<Prepared>(t_, matmul_problem_of(p), c, seed, ptx, cubin, sm_count);
  }

 private:
  // Memoized as the matmul verifier memoizes it: one search per kernel shape, dtypes, layout,
  // class and SM count (a tuning run asks for thousands of configs of a few shapes).
  std::optional<ProxyProblem> proxy_for(const MatmulProblem& p, const KernelShape& s, const ProblemClass& cls,
                                        int sm_count) const {
    const std::string memo = fmt::format("{} {} {} {} {} {} {} {} {}{}{} {} {} {}", s.cta_tile_m, s.cta_tile_n,
                                         s.cluster_m, s.cluster_n, s.tile_k, s.stages, s.splits, s.stream,
                                         to_string(p.in_dtype), to_string(p.out_dtype), to_string(p.b_layout),
                                         cls.key(), sm_count, p.key());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = proxies_.find(memo);
    if (it == proxies_.end())
      it = proxies_.emplace(memo, verification_proxy(p, s, sm_count, [&](const MatmulProblem& q) {
                               return t_.accepts(q);
                             })).first;
    return it->second;
  }

  class Prepared final : public PreparedRun {
   public:
    Prepared(const MatmulTemplate& t, const MatmulProblem& p, const core::TuningConfig& c, std::uint64_t seed,
             const std::string& ptx, const std::string& cubin, int sm_count)
        : out_(p.out_dtype), run_(t, p, c, seed, ptx, cubin, sm_count) {}
    void launch() override { run_.launch(); }
    Comparison compare() override {
      const double rel = run_.relative_error_to_reference(), threshold = verification_threshold(out_);
      Comparison c;
      c.ok = rel <= threshold;  // NaN (an unwritten, poisoned element) never passes
      c.error_ratio = rel / threshold;
      c.description = fmt::format("relative Frobenius error of C {:.3g} (threshold {:g} for {} output)", rel, threshold,
                                  to_string(out_));
      return c;
    }
    std::vector<std::uint8_t> output_bytes() override { return run_.output_bytes(); }
    std::string describe_byte(std::size_t at) const override { return run_.describe_byte(at); }

   private:
    DType out_;
    PreparedMatmul run_;
  };

  const MatmulTemplate& t_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::optional<ProxyProblem>> proxies_;
};

}  // namespace

Problem generic_problem(const MatmulProblem& m) {
  Problem p;
  p.op = "matmul";
  p.key = m.key();
  p.fields = {{"m", std::to_string(m.m)},
              {"n", std::to_string(m.n)},
              {"k", std::to_string(m.k)},
              {"dtype", std::string(to_string(m.in_dtype))},
              {"out_dtype", std::string(to_string(m.out_dtype))},
              {"layout", std::string(to_string(m.b_layout))}};
  p.flops = m.flops();
  p.bytes = m.min_bytes();
  p.dtype = std::string(to_string(m.in_dtype));
  p.out_dtype = std::string(to_string(m.out_dtype));
  return p;
}

MatmulProblem matmul_problem_of(const Problem& p) {
  if (p.op != "matmul") throw Error(ErrorKind::InvalidInput, fmt::format("a {} problem is not a matmul problem", p.op));
  return parse_matmul_key(p.key);
}

std::vector<OpSuite> matmul_op_suites() {
  std::vector<OpSuite> out;
  for (const NamedSuite& n : named_suites()) {
    OpSuite s{n.name, n.description, {}};
    for (const MatmulProblem& p : named_suite(n.name))
      s.rows.push_back({{"m", std::to_string(p.m)},
                        {"n", std::to_string(p.n)},
                        {"k", std::to_string(p.k)},
                        {"dtype", std::string(to_string(p.in_dtype))},
                        {"out-dtype", std::string(to_string(p.out_dtype))},
                        {"layout", std::string(to_string(p.b_layout))}});
    out.push_back(std::move(s));
  }
  return out;
}

const OpTemplate& matmul_op(const core::ArchSpec& arch) {
  // One face per template, made on first use (matmul_template() throws for an arch it lacks).
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<MatmulOp>> faces;
  const MatmulTemplate& t = matmul_template(arch);
  std::lock_guard<std::mutex> lock(mu);
  auto& face = faces[std::string(t.name())];
  if (!face) face = std::make_unique<MatmulOp>(t);
  return *face;
}

}  // namespace mgpu::kernels
