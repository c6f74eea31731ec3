#include "kernels/attention/tolerance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels::attention {

using core::Error;
using core::ErrorKind;

namespace {

constexpr double kU = 0x1p-23;  // one float32 ulp, relative
constexpr double kInf = std::numeric_limits<double>::infinity();

double unit_roundoff(DType t) { return t == DType::F16 ? 0x1p-11 : 0x1p-8; }
double subnormal_rounding(DType t) { return t == DType::F16 ? 0x1p-25 : 0x1p-134; }
// P below 2^-126 is flushed to zero by ex2.ftz before it is rounded to the dtype.
double p_absolute(DType t) { return std::max(subnormal_rounding(t), 0x1p-126); }
double gamma(double k) { return k * kU / (1 - k * kU); }

// Per row: the parts of the header's steps 1-5 that depend on n and sigma only.
struct RowTerms {
  double delta = 0, rho_num = 0, rho_den = 0, gamma_n = 0, rho_l = 0, abs_p = 0;
};

RowTerms row_terms(const AttentionProblem& p, std::int64_t keys, double sigma,
                   const ToleranceOptions& opt) {
  RowTerms t;
  const double n = double(keys), r = unit_roundoff(p.dtype);
  const double steps = std::ceil(n / double(std::max<std::int64_t>(opt.min_block_kv, 1)));
  t.delta = double(p.head_dim + 4) * kU * sigma;
  const double e_exp = 4 * kU * sigma + 3 * kU;
  const double e_resc = steps * (4 * kU * sigma + 4 * kU);
  const double w = std::exp(t.delta) * (1 + e_exp) * (1 + e_resc) - 1;
  t.gamma_n = gamma(n);
  t.abs_p = n * p_absolute(p.dtype);
  t.rho_num = (1 + w) * (1 + r) - 1;
  t.rho_den = (1 + w) * (1 + r) * (1 + t.gamma_n) - 1 + t.abs_p;
  t.rho_l = (1 + e_exp) * (1 + e_resc) * (1 + r) * (1 + t.gamma_n) - 1 + t.abs_p;
  return t;
}

double output_bound_from(const RowTerms& t, DType dtype, double value_max, double abs_out) {
  const double r = unit_roundoff(dtype);
  const double e =
      (abs_out * (t.rho_num + t.rho_den + t.gamma_n * (1 + t.rho_num)) + t.abs_p * value_max) /
      (1 - t.rho_den);
  return e + (abs_out + e) * ((1 + 3 * kU) * (1 + r) - 1) + subnormal_rounding(dtype);
}

double lse_bound_from(const RowTerms& t, std::int64_t keys, double sigma) {
  if (keys == 0) return 0;  // must be exactly -inf
  const double two_n = 2.0 * double(keys);
  return t.delta + t.rho_l / (1 - t.rho_l) +
         std::log(2.0) * 0x1p-22 * std::max(1.0, std::log2(two_n)) + 3 * kU * (sigma + std::log(two_n));
}

double ratio_of(double error, double bound) {
  if (std::isnan(error)) return kInf;
  if (error == 0) return 0;
  return bound > 0 ? error / bound : kInf;
}

void check_size(std::string_view name, std::size_t got, std::int64_t want) {
  if (got != std::size_t(want))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("attention comparison: {} has {} elements, the problem has {}", name, got,
                            want));
}

std::string describe(std::string_view name, const WorstElement& w) {
  if (w.index < 0) return fmt::format("{}: not compared", name);
  std::string where = fmt::format("b{} h{} q{}", w.batch, w.head, w.query);
  if (w.dim >= 0) where += fmt::format(" d{}", w.dim);
  return fmt::format(
      "{} worst at [{}] (index {}): got {:.9g}, want {:.9g}, error {:.3g} vs bound {:.3g} ({:.3g}x)",
      name, where, w.index, w.got, w.want, w.error, w.bound, w.ratio);
}

}  // namespace

double output_bound(const AttentionProblem& p, std::int64_t keys, double score_abs, double value_max,
                    double abs_out, const ToleranceOptions& opt) {
  return output_bound_from(row_terms(p, keys, score_abs, opt), p.dtype, value_max, abs_out);
}

double lse_bound(const AttentionProblem& p, std::int64_t keys, double score_abs,
                 const ToleranceOptions& opt) {
  return lse_bound_from(row_terms(p, keys, score_abs, opt), keys, score_abs);
}

std::string AttentionComparison::describe() const {
  return fmt::format("{}; {}; {}", ok ? "within tolerance" : "OUT OF TOLERANCE",
                     attention::describe("O", out), attention::describe("LSE", lse));
}

AttentionComparison compare_attention(const AttentionProblem& p, const AttentionReference& ref,
                                      std::span<const double> out, std::span<const double> lse,
                                      const ToleranceOptions& opt) {
  check_size("O", out.size(), p.q_elements());
  check_size("reference O", ref.out.size(), p.q_elements());
  if (!lse.empty()) check_size("LSE", lse.size(), p.lse_elements());

  AttentionComparison c;
  c.out.ratio = c.lse.ratio = -1;  // so that the first element compared becomes the worst
  auto consider = [](WorstElement& worst, std::int64_t index, std::int64_t b, std::int64_t h,
                     std::int64_t i, std::int64_t d, double got, double want, double error,
                     double bound) {
    double ratio = ratio_of(error, bound);
    if (ratio > worst.ratio) worst = {index, b, h, i, d, got, want, error, bound, ratio};
  };
  for (std::int64_t b = 0; b < p.batch; ++b) {
    for (std::int64_t h = 0; h < p.heads; ++h) {
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const std::int64_t row = lse_index(p, b, h, i), n = p.visible_keys(i);
        const RowTerms t = row_terms(p, n, ref.row_score_abs[row], opt);
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const std::int64_t e = q_index(p, b, i, h, d);
          const double bound = output_bound_from(t, p.dtype, ref.row_value_max[row], ref.abs_out[e]);
          consider(c.out, e, b, h, i, d, out[e], ref.out[e], std::fabs(out[e] - ref.out[e]), bound);
        }
        if (lse.empty()) continue;
        const double want = ref.lse[row], got = lse[row];
        // An empty row's -inf must be met exactly (inf - inf would be NaN).
        const double error = (std::isinf(want) || std::isinf(got)) ? (got == want ? 0 : kInf)
                                                                   : std::fabs(got - want);
        consider(c.lse, row, b, h, i, -1, got, want, error,
                 lse_bound_from(t, n, ref.row_score_abs[row]));
      }
    }
  }
  if (lse.empty()) c.lse = WorstElement{};
  c.ok = c.out.ratio <= 1 && (lse.empty() || c.lse.ratio <= 1);
  return c;
}

AttentionComparison compare_attention(const AttentionProblem& p, const AttentionReference& ref,
                                      std::span<const std::uint16_t> out, std::span<const float> lse,
                                      const ToleranceOptions& opt) {
  std::vector<double> o(out.size()), l(lse.begin(), lse.end());
  for (std::size_t e = 0; e < out.size(); ++e) o[e] = decode(p.dtype, out[e]);
  return compare_attention(p, ref, o, l, opt);
}

}  // namespace mgpu::kernels::attention
