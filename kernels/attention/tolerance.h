// When a FlashAttention forward kernel's O and LSE count as correct: every element within a
// worst-case bound derived from the FlashAttention-3 recipe's roundings, compared with the float64
// reference (reference.h). The bound is per element, in units of that element's own value
// scale, so it is tight where O averages many keys and still exact for empty rows.
//
// Row of n unmasked keys, head_dim D; reference quantities (reference.h):
//   A     = sum_j P_j |V_jd|            (abs_out: the element's value scale, |O_d| <= A)
//   Vmax  = max |V_jd| over the row      (row_value_max)
//   sigma = max_j scale sum_d |Q_d K_jd| (row_score_abs: bounds |S_j| and the error of S_j)
// Roundings (u: one float32 ulp, relative, 2^-23 -- a full ulp per operation, not half, so that
// tensor-core adders that truncate are covered; r: the dtype's unit roundoff, bf16 2^-8 with 8
// significant bits, f16 2^-11 with 11; t: the dtype's absolute rounding below its normal range,
// half its subnormal spacing, f16 2^-25, bf16 2^-134, raised to 2^-126 for P because ex2.ftz
// flushes results below 2^-126 to zero; gamma_k = k u / (1 - k u) for a float32 sum of k terms;
// c = ceil(n / min_block_kv) online-softmax steps, each rescaling at most once):
//  1. S = Q.K^T in float32 from exact 16-bit products (8x8 or 11x11 significant bits fit in 24),
//     then scale and log2(e) folded in (4 roundings):      |S^ - S| <= delta = (D + 4) u sigma.
//  2. P = ex2(x), x = (S^ - M^) log2(e) in [-2 sigma log2 e, 0], at most 2 roundings of x:
//     ln2 * 2 u * 2 sigma log2 e = 4 u sigma relative in P; ex2.approx.f32 is within 2 ulp of
//     the correctly rounded result (PTX ISA 9.7.3.21 "ex2": "The maximum ulp error is 2 ulp from
//     correctly rounded result across the full range of inputs"), <= 2.5 u:
//                                                          e_exp = 4 u sigma + 3 u.
//  3. Each rescale alpha = ex2((M_old - M_new) log2 e) errs like 2, and multiplying acc and l by
//     it rounds once more:                                 e_resc = c (4 u sigma + 4 u).
//     1-3 perturb each weight P_j in numerator and denominator alike:
//                                                          w = e^delta (1 + e_exp)(1 + e_resc) - 1.
//  4. P is rounded to the dtype before the second MMA (FlashAttention-3 and attention_mgpu.py
//     feed P to wgmma in 16 bits, while l sums the float32 P; we allow either): relative r and
//     absolute t per key.
//  5. O = acc / l: acc sums n exact products P~_j V_jd in float32 (gamma_n of sum P~|V|), l sums
//     n terms (gamma_n relative). With rho_num = (1 + w)(1 + r) - 1 and
//     rho_den = (1 + w)(1 + r)(1 + gamma_n) - 1 + n t, the identity
//       O^ - O = [sum P_j a_j V_j - O sum P_j b_j] / sum P_j (1 + b_j),
//       |a_j| <= rho_num, |b_j| <= rho_den,
//     and l >= 1 (the max key's weight is ex2(0) = 1) give
//       E = (A (rho_num + rho_den + gamma_n (1 + rho_num)) + n t Vmax) / (1 - rho_den).
//  6. The division (div.approx.f32: "the maximum ulp error is 2", PTX ISA "div"; <= 3 u) and O's
//     rounding to the dtype
//     (relative r, absolute t):     bound(O_d) = E + (A + E)((1 + 3u)(1 + r) - 1) + t.
//  LSE (natural log) = M^ + ln l^ = ln sum_j e^(S^_j) (1 + e_j), |e_j| <= rho_L =
//     (1 + e_exp)(1 + e_resc)(1 + r)(1 + gamma_n) - 1 + n t, so
//     bound(LSE) = delta + rho_L / (1 - rho_L) + ln2 2^-22 max(1, log2 2n)   (lg2.approx: PTX ISA
//     9.7.3.20, abs 2^-22 on (0.5, 2), relative 2^-22 elsewhere) + 3 u (sigma + ln 2n) (adds).
// E.g. bf16, D = 128, n = 4096, sigma = 8: bound(O) ~ 0.013 A; f16: ~ 0.0034 A + 2^-13 Vmax.
//
// Why a correct kernel stays inside: each term is the documented worst case of one operation of
// the recipe, independent of block order, warp schedule or which of several equivalent places a
// kernel rounds at (P rounded or not in l, FMA or not, division or reciprocal). Assumed: finite
// inputs, no float32 overflow, KV blocks of at least min_block_kv keys.
// Why typical bugs do not: the error is per element against ~3 r A, and A is the softmax-weighted
// mean |V|, not max |V|, so averaging over long rows does not hide a bug. A missing rescale
// leaves earlier blocks weighted e^(M_new - M_old) too high (an O(A) error once the row max moves
// by more than a few r); a mask off by one key changes a weight by 100%, which the short rows at
// the diagonal's start (1 or 2 keys, weight >= 1/2) turn into an O(A) error; an off-by-one block
// drops or repeats >= 64 keys, among them the diagonal block of every causal row. LSE checks l
// and M independently of V.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/attention/attention_problem.h"
#include "kernels/attention/reference.h"

namespace mgpu::kernels::attention {

struct ToleranceOptions {
  // Fewest keys per online-softmax step of any config (attention_mgpu.py requires block_kv to be
  // a multiple of 64); sets how many rescales a row may see.
  std::int64_t min_block_kv = 64;
};

// The bounds of the header's steps 1-6 for one element / one row of n unmasked keys.
double output_bound(const AttentionProblem& p, std::int64_t keys, double score_abs,
                    double value_max, double abs_out, const ToleranceOptions& opt = {});
double lse_bound(const AttentionProblem& p, std::int64_t keys, double score_abs,
                 const ToleranceOptions& opt = {});

struct WorstElement {
  std::int64_t index = -1;  // flat index into O (Q's layout) or LSE; -1 when nothing was compared
  std::int64_t batch = 0, head = 0, query = 0, dim = -1;  // dim -1 for LSE
  double got = 0, want = 0, error = 0, bound = 0;
  double ratio = 0;  // error / bound; infinite for NaN, or a nonzero error against a zero bound
};

struct AttentionComparison {
  bool ok = true;     // every compared element within its bound
  WorstElement out;   // the O element with the largest error / bound
  WorstElement lse;   // likewise for LSE
  std::string describe() const;  // one line naming the worst element of each
};

// out: the kernel's O as values (Q's layout); lse: natural-log LSE, or empty to skip it.
// Throws Error{InvalidInput} on spans of the wrong size.
AttentionComparison compare_attention(const AttentionProblem& p, const AttentionReference& ref,
                                      std::span<const double> out, std::span<const double> lse,
                                      const ToleranceOptions& opt = {});
// The same for a kernel's raw outputs: O as the dtype's 16-bit words, LSE as float32 natural log.
AttentionComparison compare_attention(const AttentionProblem& p, const AttentionReference& ref,
                                      std::span<const std::uint16_t> out, std::span<const float> lse,
                                      const ToleranceOptions& opt = {});

}  // namespace mgpu::kernels::attention
