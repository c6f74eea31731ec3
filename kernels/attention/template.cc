#include "kernels/attention/template.h"

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/attention/cost_model.h"
#include "kernels/attention/device_run.h"

#ifndef MGPU_ATTENTION_SM90_SOURCE_HASH
#error "MGPU_ATTENTION_SM90_SOURCE_HASH is set by kernels/CMakeLists.txt"
#endif

namespace mgpu::kernels::attention {

namespace {

using core::Error;
using core::ErrorKind;

constexpr std::int64_t kMaxFlag = (std::int64_t{1} << 31) - 1;

class AttentionSm90 final : public OpTemplate {
 public:
  std::string_view op() const override { return "attention"; }
  std::string_view name() const override { return "attention_sm90"; }
  std::string_view source_hash() const override { return MGPU_ATTENTION_SM90_SOURCE_HASH; }
  const core::ArchSpec& arch() const override { return core::parse_arch("sm_90a"); }
  std::string_view description() const override {
    return "FlashAttention forward O = softmax(Q.K^T / sqrt(d)).V with its log-sum-exp: grouped-query heads, "
           "bottom-right causal masks, ragged lengths";
  }

  std::vector<ProblemFlag> problem_flags() const override {
    const AttentionProblem d;
    return {{"batch", "Sequences in the batch", std::to_string(d.batch), false, {}, 1, kMaxFlag},
            {"heads", "Query heads", std::to_string(d.heads), false, {}, 1, kMaxFlag},
            {"kv-heads", "K/V heads (grouped-query attention: heads is a multiple of it; 1 is multi-query; default: "
             "--heads)", "", false, {}, 1, kMaxFlag},
            {"seq-q", "Query rows per sequence", std::to_string(d.seq_q), false, {}, 1, kMaxFlag},
            {"seq-kv", "Keys per sequence (default: --seq-q)", "", false, {}, 1, kMaxFlag},
            {"head-dim", "Head dimension", std::to_string(d.head_dim), false, {"64", "128", "256"}, 0, 0},
            {"dtype", "Element type of Q, K, V and O (the log-sum-exp is f32)", "bf16", false, {"bf16", "f16"}, 0, 0},
            {"causal", "Causal mask, aligned to the bottom right (query i sees keys j <= i + seq_kv - seq_q)", "", true, {}, 0, 0}};
  }

  Problem problem(const std::map<std::string, std::string>& v) const override {
    AttentionProblem p;
    p.batch = flag_integer(v, "batch", 1, kMaxFlag);
    p.heads = flag_integer(v, "heads", 1, kMaxFlag);
    p.seq_q = flag_integer(v, "seq-q", 1, kMaxFlag);
    // Left out: multi-head attention (as many K/V heads as query heads), self-attention lengths.
    std::map<std::string, std::string> filled = v;
    if (filled["kv-heads"].empty()) filled["kv-heads"] = std::to_string(p.heads);
    if (filled["seq-kv"].empty()) filled["seq-kv"] = std::to_string(p.seq_q);
    p.kv_heads = flag_integer(filled, "kv-heads", 1, kMaxFlag);
    p.seq_kv = flag_integer(filled, "seq-kv", 1, kMaxFlag);
    p.head_dim = std::stoll(flag_choice(v, "head-dim", {"64", "128", "256"}));
    p.dtype = flag_choice(v, "dtype", {"bf16", "f16"}) == "f16" ? DType::F16 : DType::BF16;
    p.causal = flag_switch(v, "causal");
    validate(p);
    return generic_problem(p);
  }
  Problem problem_from_key(std::string_view key) const override { return generic_problem(parse_attention_key(key)); }

  core::ParamSpace space() const override {
    return core::ParamSpace({
        {"block_q", {std::int64_t{64}}, "Query rows per consumer warpgroup (wgmma's M; two consumers per CTA)"},
        {"block_kv", {std::int64_t{64}, std::int64_t{128}}, "Keys per step: the width of the S tile and of a K/V stage"},
        {"max_concurrent_steps", {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{4}},
         "K/V stages in flight in the shared-memory ring"},
        {"consumer_schedule", {std::string("serial"), std::string("intra_wg_overlap")},
         "A consumer's MMAs and softmax per KV block: serial, or FlashAttention-3's intra-warpgroup overlap "
         "(the softmax of block j while O += P.V of block j-1 runs)"},
    });
  }
  core::TuningConfig default_config() const override {
    core::TuningConfig c;
    c.set("block_q", std::int64_t{64});
    c.set("block_kv", std::int64_t{128});
    c.set("max_concurrent_steps", std::int64_t{2});
    c.set("consumer_schedule", std::string("serial"));
    return c;
  }
  std::optional<Rejection> why_invalid(const Problem& p, const core::TuningConfig& c) const override {
    if (auto r = attention::why_invalid(attention_problem(p), attention_config(c))) return Rejection{r->rule, r->reason};
    return std::nullopt;
  }
  std::string build_mlir(const Problem& p, const core::TuningConfig& c) const override {
    return build_attention_sm90(attention_problem(p), attention_config(c)).mlir;
  }
  double predict_ms(const Problem& p, const core::TuningConfig& c, const core::DeviceSpec& device) const override {
    return predict_attention(attention_problem(p), attention_config(c), device).total_ms;
  }

  std::vector<std::string> kernel_fields() const override { return {"head_dim"}; }
  std::vector<Problem> kernel_problems() const override {
    std::vector<Problem> out;
    for (std::int64_t d : {64, 128, 256})
      for (DType t : {DType::BF16, DType::F16})
        for (bool causal : {false, true}) {
          AttentionProblem p;
          p.batch = 1, p.heads = 1, p.kv_heads = 1, p.seq_q = 128, p.seq_kv = 128;
          p.head_dim = d, p.dtype = t, p.causal = causal;
          out.push_back(generic_problem(p));
        }
    return out;
  }

  // The kernel's code depends on the head dim, the dtype and the mask (and the config); lengths,
  // heads and batch are launch values. Three problems per (head dim, dtype, mask) exercise what
  // the launch values change: ragged lengths whose K/V ring wraps (6 blocks of 64), grouped-query
  // heads with a partial last block, and either a second batch (non-causal) or, causal, a query
  // longer than the keys, whose first rows see no key (O = 0, LSE = -inf).
  // Neither the config nor the device's SM count changes them: the grid is one CTA per query
  // block and head, whatever the SMs.
  std::vector<VerificationProblem> verification_problems(const Problem& target, const core::TuningConfig&,
                                                         int) const override {
    const AttentionProblem t = attention_problem(target);
    auto make = [&](std::string kind, std::int64_t b, std::int64_t h, std::int64_t kvh, std::int64_t sq, std::int64_t skv) {
      AttentionProblem p = t;
      p.batch = b, p.heads = h, p.kv_heads = kvh, p.seq_q = sq, p.seq_kv = skv;
      return VerificationProblem{fmt::format("attention_d{}_{}_{}_{}", t.head_dim, to_string(t.dtype),
                                             t.causal ? "causal" : "noncausal", kind),
                                 generic_problem(p)};
    };
    std::vector<VerificationProblem> v = {make("ragged", 1, 2, 2, 130, 64 * 5 + 17), make("gqa", 1, 4, 1, 70, 150)};
    v.push_back(t.causal ? make("rows_without_keys", 1, 1, 1, 200, 90) : make("batch", 2, 1, 1, 64, 64));
    return v;
  }

  std::string kernel_name() const override { return BuiltAttention{}.kernel_name; }
  std::unique_ptr<PreparedRun> prepare(const Problem& p, const core::TuningConfig& c, std::uint64_t seed,
                                       const std::string& ptx, const std::string& cubin, int) const override {
    return std::make_unique<Prepared>(attention_problem(p), attention_config(c), seed, ptx, cubin);
  }

 private:
  class Prepared final : public PreparedRun {
   public:
    Prepared(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed, const std::string& ptx,
             const std::string& cubin)
        : run_(p, c, seed, ptx, cubin) {}
    void launch() override { run_.launch(); }
    Comparison compare() override {
      const AttentionComparison a = run_.compare();
      return {a.ok, std::max(a.out.ratio, a.lse.ratio), a.describe()};
    }
    std::vector<std::uint8_t> output_bytes() override { return run_.output_bytes(); }
    std::string describe_byte(std::size_t at) const override { return run_.describe_byte(at); }

   private:
    PreparedAttention run_;
  };
};

}  // namespace

AttentionProblem attention_problem(const Problem& p) {
  if (p.op != "attention")
    throw Error(ErrorKind::InvalidInput, fmt::format("a {} problem is not an attention problem", p.op));
  return parse_attention_key(p.key);
}

Problem generic_problem(const AttentionProblem& a) {
  Problem p;
  p.op = "attention";
  p.key = a.key();
  p.fields = {{"batch", std::to_string(a.batch)},       {"heads", std::to_string(a.heads)},
              {"kv_heads", std::to_string(a.kv_heads)}, {"seq_q", std::to_string(a.seq_q)},
              {"seq_kv", std::to_string(a.seq_kv)},     {"head_dim", std::to_string(a.head_dim)},
              {"dtype", std::string(to_string(a.dtype))}, {"causal", a.causal ? "true" : "false"}};
  p.flops = a.flops();
  p.bytes = a.min_bytes();
  p.dtype = p.out_dtype = std::string(to_string(a.dtype));
  return p;
}

AttentionConfig attention_config(const core::TuningConfig& c) {
  AttentionConfig a;
  a.block_q = static_cast<int>(c.get_int("block_q"));
  a.block_kv = static_cast<int>(c.get_int("block_kv"));
  a.max_concurrent_steps = static_cast<int>(c.get_int("max_concurrent_steps"));
  // Configs stored before the schedule was a knob ran the serial one.
  a.schedule = c.has("consumer_schedule") && c.get_str("consumer_schedule") == "intra_wg_overlap"
                   ? ConsumerSchedule::IntraWgOverlap
                   : ConsumerSchedule::Serial;
  return a;
}

const OpTemplate& attention_template(const core::ArchSpec& arch) {
  static const AttentionSm90 sm90;
  if (arch.name == sm90.arch().name) return sm90;
  throw Error(ErrorKind::Unavailable, fmt::format("there is no attention template for {} (only sm_90a)", arch.name));
}

}  // namespace mgpu::kernels::attention
