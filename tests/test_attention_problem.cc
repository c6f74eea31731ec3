// The FlashAttention forward family's foundation: the problem (validation, key, flop count), the
// float64 reference, and the tolerance a kernel's O and LSE are held to.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "kernels/attention/attention_problem.h"
#include "kernels/attention/reference.h"
#include "kernels/attention/tolerance.h"

namespace mgpu::kernels::attention {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<std::uint16_t> random_words(DType t, std::int64_t n, unsigned seed, double sd = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, sd);
  std::vector<std::uint16_t> w(n);
  for (auto& x : w) x = encode(t, dist(rng));
  return w;
}

struct Inputs {
  std::vector<std::uint16_t> q, k, v;
};

// Element values by coordinates, in the layouts of reference.h.
double q_at(const AttentionProblem& p, const Inputs& in, std::int64_t b, std::int64_t i, std::int64_t h,
            std::int64_t d) {
  return decode(p.dtype, in.q[q_index(p, b, i, h, d)]);
}
double k_at(const AttentionProblem& p, const Inputs& in, std::int64_t b, std::int64_t j, std::int64_t kvh,
            std::int64_t d) {
  return decode(p.dtype, in.k[kv_index(p, b, j, kvh, d)]);
}
double v_at(const AttentionProblem& p, const Inputs& in, std::int64_t b, std::int64_t j, std::int64_t kvh,
            std::int64_t d) {
  return decode(p.dtype, in.v[kv_index(p, b, j, kvh, d)]);
}

Inputs random_inputs(const AttentionProblem& p, unsigned seed) {
  return {random_words(p.dtype, p.q_elements(), seed), random_words(p.dtype, p.kv_elements(), seed + 1),
          random_words(p.dtype, p.kv_elements(), seed + 2)};
}

void expect_invalid(const AttentionProblem& p, const std::string& field) {
  try {
    validate(p);
    FAIL() << "accepted " << p.key();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(AttentionProblem, ValidationNamesTheOffendingField) {
  EXPECT_NO_THROW(validate(AttentionProblem{}));
  EXPECT_NO_THROW(validate(AttentionProblem{.heads = 32, .kv_heads = 8, .seq_q = 1, .seq_kv = 7, .causal = true}));
  expect_invalid({.batch = 0}, "batch");
  expect_invalid({.heads = -1}, "heads");
  expect_invalid({.kv_heads = 0}, "kv_heads");
  expect_invalid({.seq_q = 0}, "seq_q");
  expect_invalid({.seq_kv = std::int64_t(1) << 31}, "seq_kv");
  expect_invalid({.heads = 32, .kv_heads = 5}, "kv_heads");
  expect_invalid({.heads = 8, .kv_heads = 16}, "kv_heads");
  for (std::int64_t d : {0, 32, 96, 512}) expect_invalid({.head_dim = d}, "head_dim");
  expect_invalid({.dtype = DType::F32}, "dtype");
  // Every dimension in range, but the products overflow int64 byte counts.
  const std::int64_t big = std::numeric_limits<std::int32_t>::max();
  expect_invalid({.batch = big, .heads = big, .kv_heads = 1, .seq_q = 1, .seq_kv = 1}, "Q/O");
  expect_invalid({.batch = big, .heads = 1, .kv_heads = 1, .seq_q = 1, .seq_kv = big}, "K/V");
  try {
    validate(AttentionProblem{.head_dim = 96});
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("64, 128 or 256"), std::string::npos) << e.what();  // the range
  }
}

TEST(AttentionProblem, KeyIsStableAndParsesBack) {
  AttentionProblem p{.batch = 1, .heads = 32, .kv_heads = 8, .seq_q = 4096, .seq_kv = 4096,
                     .head_dim = 128, .dtype = DType::BF16, .causal = true};
  EXPECT_EQ(p.key(), "b1_h32_kvh8_sq4096_skv4096_d128_bf16_causal");
  EXPECT_EQ(AttentionProblem{}.key(), "b1_h32_kvh32_sq4096_skv4096_d128_bf16_noncausal");
  for (const AttentionProblem& q :
       {p, AttentionProblem{}, AttentionProblem{.batch = 3, .heads = 6, .kv_heads = 2, .seq_q = 7,
                                                .seq_kv = 1000003, .head_dim = 64, .dtype = DType::F16},
        AttentionProblem{.batch = 2147483647, .heads = 1, .kv_heads = 1, .seq_q = 1, .seq_kv = 1,
                         .head_dim = 256, .causal = true}}) {
    EXPECT_EQ(parse_attention_key(q.key()), q) << q.key();
  }
  for (const char* bad : {"",
                          "b1_h32_kvh8_sq4096_skv4096_d128_bf16",
                          "b1_h32_kvh8_sq4096_skv4096_d128_bf16_causal_x",
                          "h32_b1_kvh8_sq4096_skv4096_d128_bf16_causal",
                          "b01_h32_kvh8_sq4096_skv4096_d128_bf16_causal",
                          "b+1_h32_kvh8_sq4096_skv4096_d128_bf16_causal",
                          "b-1_h32_kvh8_sq4096_skv4096_d128_bf16_causal",
                          "b1_h32_kvh8_sq4096_skv4096_d128_f32_causal",
                          "b1_h32_kvh8_sq4096_skv4096_d128_bf16_masked",
                          "b1_h32_kvh5_sq4096_skv4096_d128_bf16_causal",
                          "b1_h32_kvh8_sq4096_skv4096_d96_bf16_causal",
                          "b99999999999999999999_h32_kvh8_sq1_skv1_d128_bf16_causal",
                          "b1_h32_kvh8_sq4096_skv4096_d128x_bf16_causal"}) {
    try {
      parse_attention_key(bad);
      ADD_FAILURE() << "parsed '" << bad << "'";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput) << bad;
    }
  }
}

TEST(AttentionProblem, CausalMaskIsBottomRightAligned) {
  // The two examples of FlashAttention's README ("2.1: Change behavior of causal flag").
  AttentionProblem wide{.seq_q = 2, .seq_kv = 5, .causal = true};
  EXPECT_EQ(wide.visible_keys(0), 4);
  EXPECT_EQ(wide.visible_keys(1), 5);
  AttentionProblem tall{.seq_q = 5, .seq_kv = 2, .causal = true};
  const std::int64_t tall_keys[] = {0, 0, 0, 1, 2};
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(tall.visible_keys(i), tall_keys[i]);
  AttentionProblem full{.seq_q = 5, .seq_kv = 2};
  EXPECT_EQ(full.visible_keys(0), 2);
}

TEST(AttentionProblem, FlopsCountExactlyTheUnmaskedPairs) {
  for (bool causal : {false, true}) {
    for (std::int64_t sq = 1; sq <= 11; ++sq) {
      for (std::int64_t skv = 1; skv <= 11; ++skv) {
        AttentionProblem p{.batch = 3, .heads = 4, .kv_heads = 2, .seq_q = sq, .seq_kv = skv,
                           .head_dim = 64, .causal = causal};
        std::int64_t pairs = 0;  // brute force, straight from the mask's definition
        for (std::int64_t i = 0; i < sq; ++i)
          for (std::int64_t j = 0; j < skv; ++j) pairs += !causal || j <= i + skv - sq;
        EXPECT_EQ(p.unmasked_pairs_per_head(), pairs) << p.key();
        EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 64 * 3 * 4 * double(pairs)) << p.key();
      }
    }
  }
  AttentionProblem big{.batch = 4, .heads = 32, .kv_heads = 8, .seq_q = 8192, .seq_kv = 8192, .head_dim = 128};
  EXPECT_DOUBLE_EQ(big.flops(), 4.0 * 4 * 32 * 8192.0 * 8192.0 * 128);
  big.causal = true;  // the diagonal is unmasked: n(n+1)/2 pairs, a little over half
  EXPECT_DOUBLE_EQ(big.flops(), 4.0 * 4 * 32 * (8192.0 * 8193.0 / 2) * 128);
  AttentionProblem huge{.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 2147483647, .seq_kv = 2147483647,
                        .head_dim = 64, .causal = true};
  EXPECT_EQ(huge.unmasked_pairs_per_head(), 2147483647LL * 2147483648LL / 2);  // no int64 overflow
  AttentionProblem b{.batch = 2, .heads = 8, .kv_heads = 2, .seq_q = 100, .seq_kv = 300, .head_dim = 64,
                     .dtype = DType::F16};
  EXPECT_DOUBLE_EQ(b.min_bytes(), 2.0 * (2 * 100 * 8 * 64 * 2 + 2 * 300 * 2 * 64 * 2) + 4.0 * 2 * 8 * 100);
}

// Head dim must be 64, so the "head_dim 1" hand case uses component 0 only (the rest are zero).
TEST(AttentionReference, MatchesAHandComputedCase) {
  for (bool causal : {false, true}) {
    AttentionProblem p{.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 2, .seq_kv = 2, .head_dim = 64,
                       .causal = causal};
    std::vector<std::uint16_t> q(p.q_elements(), 0), k(p.kv_elements(), 0), v(p.kv_elements(), 0);
    auto bf = [](float f) { return core::to_bf16(f); };
    q[q_index(p, 0, 0, 0, 0)] = bf(1), q[q_index(p, 0, 1, 0, 0)] = bf(2);
    k[kv_index(p, 0, 0, 0, 0)] = bf(1), k[kv_index(p, 0, 1, 0, 0)] = bf(-1);
    v[kv_index(p, 0, 0, 0, 0)] = bf(2), v[kv_index(p, 0, 1, 0, 0)] = bf(4);
    AttentionReference r = reference_attention(p, q, k, v, 1.0);
    // Row 0: scores (1, -1), or key 0 alone under the causal mask. Row 1: scores (2, -2).
    const double e = std::exp(1.0);
    const double o0 = causal ? 2.0 : (2 * e + 4 / e) / (e + 1 / e);
    const double lse0 = causal ? 1.0 : std::log(e + 1 / e);
    const double o1 = (2 * e * e + 4 / (e * e)) / (e * e + 1 / (e * e)), lse1 = std::log(e * e + 1 / (e * e));
    EXPECT_NEAR(r.out[q_index(p, 0, 0, 0, 0)], o0, 1e-15);
    EXPECT_NEAR(r.out[q_index(p, 0, 1, 0, 0)], o1, 1e-15);
    EXPECT_NEAR(r.lse[lse_index(p, 0, 0, 0)], lse0, 1e-15);
    EXPECT_NEAR(r.lse[lse_index(p, 0, 0, 1)], lse1, 1e-15);
    for (std::int64_t d = 1; d < 64; ++d) EXPECT_EQ(r.out[q_index(p, 0, 1, 0, d)], 0.0);
    EXPECT_EQ(r.out_rounded[q_index(p, 0, 1, 0, 0)], core::to_bf16(float(o1)));
    EXPECT_EQ(r.row_value_max[lse_index(p, 0, 0, 0)], causal ? 2.0 : 4.0);
    EXPECT_EQ(r.row_value_max[lse_index(p, 0, 0, 1)], 4.0);
    EXPECT_EQ(r.abs_out[q_index(p, 0, 1, 0, 0)], r.out[q_index(p, 0, 1, 0, 0)]);  // V >= 0
    EXPECT_EQ(r.row_score_abs[lse_index(p, 0, 0, 1)], 2.0);
  }
  AttentionProblem p{.heads = 1, .kv_heads = 1, .seq_q = 1, .seq_kv = 1, .head_dim = 64};
  std::vector<std::uint16_t> x(64, core::to_bf16(1.0f));
  EXPECT_DOUBLE_EQ(reference_attention(p, x, x, x).softmax_scale, 0.125);  // 1 / sqrt(64)
  EXPECT_THROW(reference_attention(p, x, x, std::vector<std::uint16_t>(63)), core::Error);
}

// An independent long-double evaluation straight from the definition (no max subtraction,
// explicit mask test per pair), for shapes small enough that exp cannot overflow.
void expect_matches_definition(const AttentionProblem& p, const Inputs& in, const AttentionReference& r) {
  const long double scale = r.softmax_scale;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const std::int64_t kvh = h / (p.heads / p.kv_heads);
        std::vector<long double> num(p.head_dim, 0);
        long double den = 0;
        for (std::int64_t j = 0; j < p.seq_kv; ++j) {
          if (p.causal && j > i + p.seq_kv - p.seq_q) continue;
          long double s = 0;
          for (std::int64_t d = 0; d < p.head_dim; ++d)
            s += (long double)q_at(p, in, b, i, h, d) * k_at(p, in, b, j, kvh, d);
          const long double w = std::exp(scale * s);
          den += w;
          for (std::int64_t d = 0; d < p.head_dim; ++d) num[d] += w * v_at(p, in, b, j, kvh, d);
        }
        const std::int64_t row = lse_index(p, b, h, i);
        if (den == 0) {
          EXPECT_EQ(r.lse[row], -kInf);
          continue;
        }
        EXPECT_NEAR(r.lse[row], double(std::log(den)), 1e-12) << p.key() << " row " << row;
        for (std::int64_t d = 0; d < p.head_dim; ++d)
          EXPECT_NEAR(r.out[q_index(p, b, i, h, d)], double(num[d] / den), 1e-12) << p.key() << " row " << row;
      }
}

TEST(AttentionReference, MatchesTheDefinitionOnRaggedCausalAndGroupedShapes) {
  unsigned seed = 10;
  for (const AttentionProblem& p :
       {AttentionProblem{.batch = 2, .heads = 4, .kv_heads = 2, .seq_q = 3, .seq_kv = 7, .head_dim = 64, .causal = true},
        AttentionProblem{.batch = 1, .heads = 3, .kv_heads = 1, .seq_q = 9, .seq_kv = 4, .head_dim = 64,
                         .dtype = DType::F16, .causal = true},
        AttentionProblem{.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 5, .seq_kv = 13, .head_dim = 128},
        AttentionProblem{.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 6, .seq_kv = 6, .head_dim = 256, .causal = true}}) {
    Inputs in = random_inputs(p, seed += 3);
    expect_matches_definition(p, in, reference_attention(p, in.q, in.k, in.v));
  }
}

TEST(AttentionReference, GroupedQueryAttentionEqualsCopiedKeysAndValues) {
  for (std::int64_t kv_heads : {1, 2}) {
    AttentionProblem gqa{.batch = 2, .heads = 4, .kv_heads = kv_heads, .seq_q = 17, .seq_kv = 23, .head_dim = 64,
                         .causal = true};
    AttentionProblem mha = gqa;
    mha.kv_heads = 4;
    Inputs in = random_inputs(gqa, 77);
    Inputs copied{in.q, std::vector<std::uint16_t>(mha.kv_elements()),
                  std::vector<std::uint16_t>(mha.kv_elements())};
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t j = 0; j < gqa.seq_kv; ++j)
        for (std::int64_t h = 0; h < 4; ++h)  // query head h reads KV head h / (heads / kv_heads)
          for (std::int64_t d = 0; d < 64; ++d) {
            copied.k[kv_index(mha, b, j, h, d)] = in.k[kv_index(gqa, b, j, h / (4 / kv_heads), d)];
            copied.v[kv_index(mha, b, j, h, d)] = in.v[kv_index(gqa, b, j, h / (4 / kv_heads), d)];
          }
    AttentionReference a = reference_attention(gqa, in.q, in.k, in.v);
    AttentionReference m = reference_attention(mha, copied.q, copied.k, copied.v);
    EXPECT_EQ(a.out, m.out) << "kv_heads " << kv_heads;
    EXPECT_EQ(a.lse, m.lse) << "kv_heads " << kv_heads;
  }
}

TEST(AttentionReference, RowsWithNoKeyGiveZeroAndMinusInfinity) {
  AttentionProblem p{.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 5, .seq_kv = 2, .head_dim = 64, .causal = true};
  Inputs in = random_inputs(p, 5);
  AttentionReference r = reference_attention(p, in.q, in.k, in.v);
  for (std::int64_t h = 0; h < 2; ++h) {
    for (std::int64_t i = 0; i < 3; ++i) {  // seq_q - seq_kv rows above the diagonal's start
      EXPECT_EQ(r.lse[lse_index(p, 0, h, i)], -kInf);
      for (std::int64_t d = 0; d < 64; ++d) {
        EXPECT_EQ(r.out[q_index(p, 0, i, h, d)], 0.0);
        EXPECT_EQ(r.out_rounded[q_index(p, 0, i, h, d)], 0);
      }
    }
    for (std::int64_t d = 0; d < 64; ++d)  // row 3 sees key 0 alone: O is V_0 exactly
      EXPECT_EQ(r.out[q_index(p, 0, 3, h, d)], v_at(p, in, 0, 0, 0, d));
  }
  expect_matches_definition(p, in, r);
}

// A FlashAttention-3-style forward pass in float32 (what a correct kernel computes, up to the
// order of its float32 sums): S in float32, exp2 with log2(e) folded into the scale, online
// softmax over blocks of 64 keys, P rounded to the dtype for P.V while l sums the float32 P.
enum class Bug { None, NoRescale, MaskOffByOne, SkipLastBlock };

struct KernelOut {
  std::vector<std::uint16_t> out;
  std::vector<float> lse;
};

KernelOut emulate_kernel(const AttentionProblem& p, const Inputs& in, Bug bug, std::int64_t block = 64) {
  KernelOut k{std::vector<std::uint16_t>(p.q_elements()), std::vector<float>(p.lse_elements())};
  const float scale_log2 = float(1.4426950408889634 / std::sqrt(double(p.head_dim)));
  const std::int64_t D = p.head_dim;
  std::vector<float> acc(D), x(block);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads; ++h)
      for (std::int64_t i = 0; i < p.seq_q; ++i) {
        const std::int64_t kvh = p.kv_head_of(h);
        std::int64_t n = p.visible_keys(i);
        if (bug == Bug::MaskOffByOne) n = std::min(n + 1, p.seq_kv);
        if (bug == Bug::SkipLastBlock && n > block) n = (n - 1) / block * block;
        float m = -INFINITY, l = 0;
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (std::int64_t j0 = 0; j0 < n; j0 += block) {
          const std::int64_t j1 = std::min(n, j0 + block);
          float block_max = -INFINITY;
          for (std::int64_t j = j0; j < j1; ++j) {
            float s = 0;
            for (std::int64_t d = 0; d < D; ++d)
              s += float(q_at(p, in, b, i, h, d)) * float(k_at(p, in, b, j, kvh, d));
            x[j - j0] = s * scale_log2;
            block_max = std::max(block_max, x[j - j0]);
          }
          const float m_new = std::max(m, block_max), alpha = std::exp2(m - m_new);
          if (bug != Bug::NoRescale)
            for (float& a : acc) a *= alpha;
          l *= alpha;
          for (std::int64_t j = j0; j < j1; ++j) {
            const float pj = std::exp2(x[j - j0] - m_new);
            l += pj;
            const float p16 = float(decode(p.dtype, encode(p.dtype, pj)));
            for (std::int64_t d = 0; d < D; ++d) acc[d] += p16 * float(v_at(p, in, b, j, kvh, d));
          }
          m = m_new;
        }
        for (std::int64_t d = 0; d < D; ++d)
          k.out[q_index(p, b, i, h, d)] = encode(p.dtype, l > 0 ? acc[d] / l : 0.0f);
        k.lse[lse_index(p, b, h, i)] = l > 0 ? (m + std::log2(l)) * float(0.6931471805599453) : -INFINITY;
      }
  return k;
}

AttentionComparison compare_values(const AttentionProblem& p, const AttentionReference& r,
                                   const std::vector<double>& out, const std::vector<double>& lse) {
  return compare_attention(p, r, std::span<const double>(out), std::span<const double>(lse));
}
AttentionComparison compare_kernel(const AttentionProblem& p, const AttentionReference& r, const KernelOut& k) {
  return compare_attention(p, r, std::span<const std::uint16_t>(k.out), std::span<const float>(k.lse));
}

TEST(AttentionTolerance, TheExactAndTheRoundedReferencePass) {
  AttentionProblem p{.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 130, .seq_kv = 300, .head_dim = 64, .causal = true};
  Inputs in = random_inputs(p, 3);
  AttentionReference r = reference_attention(p, in.q, in.k, in.v);
  AttentionComparison exact = compare_values(p, r, r.out, r.lse);
  EXPECT_TRUE(exact.ok) << exact.describe();
  EXPECT_EQ(exact.out.error, 0.0);
  AttentionComparison rounded = compare_kernel(p, r, {r.out_rounded, {r.lse.begin(), r.lse.end()}});
  EXPECT_TRUE(rounded.ok) << rounded.describe();
  EXPECT_GT(rounded.out.error, 0.0);
  EXPECT_LT(rounded.out.ratio, 0.5) << rounded.describe();  // bf16 rounding is a third of the budget
}

TEST(AttentionTolerance, ARowMissingItsRescaleFails) {
  AttentionProblem p{.batch = 1, .heads = 2, .kv_heads = 2, .seq_q = 16, .seq_kv = 512, .head_dim = 128};
  Inputs in = random_inputs(p, 9);
  AttentionReference r = reference_attention(p, in.q, in.k, in.v);
  // Row (head 1, query 7) computed over its last block of 64 keys only, as if the accumulator
  // of the earlier blocks had been dropped instead of rescaled.
  AttentionProblem last = p;
  last.seq_kv = 64;
  Inputs tail{in.q, std::vector<std::uint16_t>(in.k.end() - last.kv_elements(), in.k.end()),
              std::vector<std::uint16_t>(in.v.end() - last.kv_elements(), in.v.end())};
  AttentionReference t = reference_attention(last, tail.q, tail.k, tail.v);
  std::vector<double> out = r.out, lse = r.lse;
  for (std::int64_t d = 0; d < p.head_dim; ++d) out[q_index(p, 0, 7, 1, d)] = t.out[q_index(p, 0, 7, 1, d)];
  lse[lse_index(p, 0, 1, 7)] = t.lse[lse_index(p, 0, 1, 7)];
  AttentionComparison c = compare_values(p, r, out, lse);
  EXPECT_FALSE(c.ok) << c.describe();
  EXPECT_EQ(c.out.head, 1);
  EXPECT_EQ(c.out.query, 7);
  EXPECT_GT(c.out.ratio, 2.0) << c.describe();
  EXPECT_EQ(c.lse.index, lse_index(p, 0, 1, 7));
  EXPECT_GT(c.lse.ratio, 2.0) << c.describe();
  EXPECT_NE(c.describe().find("OUT OF TOLERANCE"), std::string::npos);
}

TEST(AttentionTolerance, AnEmulatedFlashAttentionKernelPassesAndItsBugsFail) {
  for (DType dtype : {DType::BF16, DType::F16}) {
    for (bool causal : {false, true}) {
      AttentionProblem p{.batch = 1, .heads = 2, .kv_heads = 1, .seq_q = 192, .seq_kv = 320, .head_dim = 64,
                         .dtype = dtype, .causal = causal};
      Inputs in = random_inputs(p, causal ? 21 : 22);
      AttentionReference r = reference_attention(p, in.q, in.k, in.v);
      std::string what = p.key();
      KernelOut good = emulate_kernel(p, in, Bug::None);
      AttentionComparison c = compare_kernel(p, r, good);
      EXPECT_TRUE(c.ok) << what << ": " << c.describe();
      for (Bug bug : {Bug::NoRescale, Bug::MaskOffByOne, Bug::SkipLastBlock}) {
        if (bug == Bug::MaskOffByOne && !causal) continue;  // nothing beyond seq_kv to unmask
        AttentionComparison f = compare_kernel(p, r, emulate_kernel(p, in, bug));
        EXPECT_FALSE(f.ok) << what << " bug " << int(bug) << ": " << f.describe();
      }
    }
  }
}

TEST(AttentionTolerance, EmptyRowsMustBeZeroAndMinusInfinity) {
  AttentionProblem p{.batch = 1, .heads = 1, .kv_heads = 1, .seq_q = 4, .seq_kv = 2, .head_dim = 64,
                     .dtype = DType::F16, .causal = true};
  Inputs in = random_inputs(p, 4);
  AttentionReference r = reference_attention(p, in.q, in.k, in.v);
  std::vector<double> out = r.out, lse = r.lse;
  EXPECT_TRUE(compare_values(p, r, out, lse).ok);
  out[q_index(p, 0, 0, 0, 5)] = NAN;  // 0/0 from an unguarded normalization
  AttentionComparison c = compare_values(p, r, out, lse);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.out.index, q_index(p, 0, 0, 0, 5));
  out = r.out;
  lse[lse_index(p, 0, 0, 1)] = kInf;  // FlashAttention-2's convention, not ours
  EXPECT_FALSE(compare_values(p, r, out, lse).ok);
  // Without an LSE only O is compared.
  AttentionComparison no_lse = compare_attention(p, r, std::span<const double>(out), std::span<const double>());
  EXPECT_TRUE(no_lse.ok);
  EXPECT_EQ(no_lse.lse.index, -1);
}

}  // namespace
}  // namespace mgpu::kernels::attention
