#include "kernels/matmul_suites.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels {
namespace {

// A transformer's linear layers: (N, K) of each weight, with the fused QKV and gate/up
// projections as inference engines run them.
struct Model {
  const char* name;
  const char* what;
  std::int64_t hidden, intermediate, heads, kv_heads, head_dim, vocab;
};

constexpr Model kModels[] = {
    // Meta Llama 3 model cards / config.json: hidden_size, intermediate_size, attention heads,
    // key-value heads, head_dim = hidden / heads, vocab_size.
    {"llama3-8b", "Llama-3-8B", 4096, 14336, 32, 8, 128, 128256},
    {"llama3-70b", "Llama-3-70B", 8192, 28672, 64, 8, 128, 128256},
};
// Rows of A: decode (one token per sequence of a batch of 1..128) and prefill (prompt tokens).
constexpr std::int64_t kTokens[] = {1, 16, 32, 64, 128, 2048, 8192};
constexpr const char* kTokensText = "decode M = 1, 16, 32, 64, 128 and prefill M = 2048, 8192";

std::vector<MatmulProblem> model_shapes(const Model& m, DType in, DType out) {
  const std::int64_t qkv = (m.heads + 2 * m.kv_heads) * m.head_dim;
  const std::pair<std::int64_t, std::int64_t> layers[] = {
      {qkv, m.hidden},                 // fused Q, K, V projection
      {m.hidden, m.heads * m.head_dim},  // attention output projection
      {2 * m.intermediate, m.hidden},  // fused gate and up projections
      {m.hidden, m.intermediate},      // down projection
      {m.vocab, m.hidden},             // lm_head: the logits
  };
  std::vector<MatmulProblem> out_shapes;
  for (std::int64_t tokens : kTokens)
    for (auto [n, k] : layers)
      out_shapes.push_back({.m = tokens, .n = n, .k = k, .in_dtype = in, .out_dtype = out, .b_layout = BLayout::NK});
  return out_shapes;
}

}  // namespace

std::vector<NamedSuite> named_suites() {
  std::vector<NamedSuite> out;
  for (const Model& m : kModels)
    out.push_back({m.name, fmt::format("{}: QKV, output, gate+up, down and lm_head projections at {}", m.what,
                                       kTokensText)});
  out.push_back({"llama3", "both Llama-3 suites (8B and 70B)"});
  return out;
}

std::vector<MatmulProblem> named_suite(std::string_view name, DType in, DType out) {
  std::vector<MatmulProblem> shapes;
  for (const Model& m : kModels)
    if (name == m.name || name == "llama3") {
      auto s = model_shapes(m, in, out);
      shapes.insert(shapes.end(), s.begin(), s.end());
    }
  if (shapes.empty()) {
    std::string names;
    for (const NamedSuite& s : named_suites()) names += (names.empty() ? "" : ", ") + s.name;
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("unknown shape suite '{}': give a .json or .csv file, or one of {}", name, names));
  }
  return shapes;
}

double shape_distance(const MatmulProblem& a, const MatmulProblem& b) {
  if (a.in_dtype != b.in_dtype || a.out_dtype != b.out_dtype || a.b_layout != b.b_layout)
    return std::numeric_limits<double>::infinity();
  auto d = [](std::int64_t x, std::int64_t y) { return std::abs(std::log(double(x) / double(y))); };
  return d(a.m, b.m) + d(a.n, b.n) + d(a.k, b.k);
}

}  // namespace mgpu::kernels
