#include "kernels/attention/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/half.h"

namespace mgpu::kernels::attention {

using core::Error;
using core::ErrorKind;

double default_softmax_scale(const AttentionProblem& p) { return 1.0 / std::sqrt(double(p.head_dim)); }

double decode(DType t, std::uint16_t word) {
  return t == DType::F16 ? core::from_f16(word) : core::from_bf16(word);
}

std::uint16_t encode(DType t, double value) {
  // Rounded here to the dtype's significand (8 bits bf16, 11 bits f16; fixed spacing below the
  // normal range) so that the float the core/half.h conversion then sees is exact: going through
  // float first would round twice.
  if (std::isfinite(value) && value != 0) {
    const int bits = t == DType::F16 ? 11 : 8, min_exp = t == DType::F16 ? -13 : -125;
    int e;
    std::frexp(value, &e);  // value = m * 2^e, |m| in [0.5, 1)
    const int shift = bits - std::max(e, min_exp);
    value = std::ldexp(std::nearbyint(std::ldexp(value, shift)), -shift);
  }
  float f = float(value);
  return t == DType::F16 ? core::to_f16(f) : core::to_bf16(f);
}

namespace {

std::vector<double> decode_all(DType t, std::span<const std::uint16_t> words) {
  std::vector<double> out(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) out[i] = decode(t, words[i]);
  return out;
}

void check_size(std::string_view name, std::size_t got, std::int64_t want) {
  if (got != std::size_t(want))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("attention reference: {} has {} elements, the problem needs {}", name,
                            got, want));
}

}  // namespace

AttentionReference reference_attention(const AttentionProblem& p, std::span<const std::uint16_t> q,
                                       std::span<const std::uint16_t> k,
                                       std::span<const std::uint16_t> v,
                                       std::optional<double> softmax_scale) {
  validate(p);
  check_size("Q", q.size(), p.q_elements());
  check_size("K", k.size(), p.kv_elements());
  check_size("V", v.size(), p.kv_elements());

  AttentionReference r;
  r.softmax_scale = softmax_scale.value_or(default_softmax_scale(p));
  if (!std::isfinite(r.softmax_scale))
    throw Error(ErrorKind::InvalidInput, fmt::format("attention reference: softmax scale must be "
                                                     "finite, got {}",
                                                     r.softmax_scale));
  r.out.assign(p.q_elements(), 0.0);
  r.abs_out.assign(p.q_elements(), 0.0);
  r.lse.assign(p.lse_elements(), -std::numeric_limits<double>::infinity());
  r.row_value_max.assign(p.lse_elements(), 0.0);
  r.row_score_abs.assign(p.lse_elements(), 0.0);

  const std::vector<double> qd = decode_all(p.dtype, q), kd = decode_all(p.dtype, k),
                            vd = decode_all(p.dtype, v);
  const std::int64_t D = p.head_dim;
  const double scale = r.softmax_scale;

  // Scratch reused across rows: scores and weights of one row, |V| and its running max over keys
  // of one (batch, KV head), and one row's accumulators.
  std::vector<double> s(p.seq_kv), vabs(p.seq_kv * D), vmax_prefix(p.seq_kv), acc(D), acc_abs(D);

  for (std::int64_t b = 0; b < p.batch; ++b) {
    for (std::int64_t kvh = 0; kvh < p.kv_heads; ++kvh) {
      double running = 0;
      for (std::int64_t j = 0; j < p.seq_kv; ++j) {
        const double* vj = &vd[kv_index(p, b, j, kvh, 0)];
        for (std::int64_t d = 0; d < D; ++d) {
          vabs[j * D + d] = std::fabs(vj[d]);
          running = std::max(running, vabs[j * D + d]);
        }
        vmax_prefix[j] = running;
      }
      for (std::int64_t h = kvh * p.group_size(); h < (kvh + 1) * p.group_size(); ++h) {
        for (std::int64_t i = 0; i < p.seq_q; ++i) {
          const std::int64_t n = p.visible_keys(i), row = lse_index(p, b, h, i);
          if (n == 0) continue;  // O = 0, LSE = -inf, scales 0: already so
          const double* qi = &qd[q_index(p, b, i, h, 0)];
          double m = -std::numeric_limits<double>::infinity(), score_abs = 0;
          for (std::int64_t j = 0; j < n; ++j) {
            const double* kj = &kd[kv_index(p, b, j, kvh, 0)];
            // Four independent partial sums (head_dim is a multiple of 64): the latency chain of
            // one sum, not the arithmetic, would otherwise bound the reference's speed.
            double dot[4] = {0, 0, 0, 0}, dot_abs[4] = {0, 0, 0, 0};
            for (std::int64_t d = 0; d < D; d += 4) {
              for (int c = 0; c < 4; ++c) {
                dot[c] += qi[d + c] * kj[d + c];
                dot_abs[c] += std::fabs(qi[d + c] * kj[d + c]);
              }
            }
            s[j] = scale * ((dot[0] + dot[1]) + (dot[2] + dot[3]));
            const double abs_sum = (dot_abs[0] + dot_abs[1]) + (dot_abs[2] + dot_abs[3]);
            m = std::max(m, s[j]);
            score_abs = std::max(score_abs, std::fabs(scale) * abs_sum);
          }
          double l = 0;
          for (std::int64_t j = 0; j < n; ++j) {
            s[j] = std::exp(s[j] - m);
            l += s[j];
          }
          std::fill(acc.begin(), acc.end(), 0.0);
          std::fill(acc_abs.begin(), acc_abs.end(), 0.0);
          for (std::int64_t j = 0; j < n; ++j) {
            const double pj = s[j];
            const double* vj = &vd[kv_index(p, b, j, kvh, 0)];
            const double* aj = &vabs[j * D];
            for (std::int64_t d = 0; d < D; ++d) {
              acc[d] += pj * vj[d];
              acc_abs[d] += pj * aj[d];
            }
          }
          const std::int64_t o = q_index(p, b, i, h, 0);
          for (std::int64_t d = 0; d < D; ++d) {
            r.out[o + d] = acc[d] / l;
            r.abs_out[o + d] = acc_abs[d] / l;
          }
          r.lse[row] = m + std::log(l);
          r.row_value_max[row] = vmax_prefix[n - 1];
          r.row_score_abs[row] = score_abs;
        }
      }
    }
  }
  r.out_rounded.resize(r.out.size());
  for (std::size_t e = 0; e < r.out.size(); ++e) r.out_rounded[e] = encode(p.dtype, r.out[e]);
  return r;
}

}  // namespace mgpu::kernels::attention
