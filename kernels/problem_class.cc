#include "kernels/problem_class.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>

namespace mgpu::kernels {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A CTA of a two-CTA cluster along a dimension has no tile when the last cluster tile along
// it ends within the first CTA's tile.
bool idle_along(std::int64_t extent, int cta_tile, int cluster) {
  if (cluster < 2) return false;
  std::int64_t rest = extent % (std::int64_t(cta_tile) * cluster);
  return rest > 0 && rest <= std::int64_t(cta_tile) * (cluster - 1);
}

struct Launch {
  std::int64_t tiles_per_cta = 1;  // the most work units any CTA walks
  std::int64_t k_steps = 1;        // of the longest unit
};

// Stream-K (kernels/matmul_common/tile_walk.h): CTA b of G takes iterations [b I / G, (b+1) I / G)
// of I = tiles x k; its units are the tiles that range touches.
struct StreamLaunch {
  std::int64_t most_units = 0, longest = 0;
  bool shared_tile = false;  // some tile is cut between CTAs
};
StreamLaunch stream_launch(std::int64_t tiles, std::int64_t k, int sm_count) {
  const std::int64_t iters = tiles * k, g = std::max<std::int64_t>(1, std::min<std::int64_t>(sm_count, iters));
  StreamLaunch l;
  for (std::int64_t b = 0; b < g; ++b) {
    const std::int64_t start = b * iters / g, end = (b + 1) * iters / g;
    if (start >= end) continue;
    l.most_units = std::max(l.most_units, (end - 1) / k - start / k + 1);
    l.longest = std::max(l.longest, std::min(end - start, k));
    if (b > 0 && start % k != 0) l.shared_tile = true;
  }
  return l;
}

Launch launch_of(const MatmulProblem& p, const KernelShape& s, int sm_count) {
  std::int64_t um = std::int64_t(s.cta_tile_m) * s.cluster_m, un = std::int64_t(s.cta_tile_n) * s.cluster_n;
  if (s.stream) {
    const StreamLaunch l = stream_launch(ceil_div(p.m, um) * ceil_div(p.n, un), ceil_div(p.k, s.tile_k), sm_count);
    return {l.most_units, l.longest};
  }
  const std::int64_t splits = std::max(1, s.splits);
  std::int64_t units = ceil_div(p.m, um) * ceil_div(p.n, un) * splits;
  std::int64_t clusters = std::max<std::int64_t>(1, std::min<std::int64_t>(sm_count / s.cluster_size(), units));
  return {ceil_div(units, clusters), ceil_div(ceil_div(p.k, s.tile_k), splits)};
}

}  // namespace

std::string ProblemClass::key() const {
  std::string k;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!k.empty()) k += '+';
    k += name;
  };
  add(ragged_m, "ragged_m");
  add(ragged_n, "ragged_n");
  add(k_tail, "k_tail");
  add(multi_tile, "multi_tile");
  add(idle_cta, "idle_cta");
  add(cluster, "cluster");
  return k.empty() ? "aligned" : k;
}

ProblemClass classify(const MatmulProblem& p, const KernelShape& s, int sm_count) {
  ProblemClass c;
  c.ragged_m = p.m % s.cta_tile_m != 0;
  c.ragged_n = p.n % s.cta_tile_n != 0;
  c.k_tail = p.k % s.tile_k != 0;
  c.multi_tile = launch_of(p, s, sm_count).tiles_per_cta > 1;
  c.idle_cta = idle_along(p.m, s.cta_tile_m, s.cluster_m) || idle_along(p.n, s.cta_tile_n, s.cluster_n);
  c.cluster = s.cluster_size() > 1;
  return c;
}

std::optional<ProxyProblem> proxy_problem(const MatmulProblem& like, const KernelShape& s, const ProblemClass& want,
                                          const std::function<bool(const MatmulProblem&)>& valid_problem) {
  // Extents around whole cluster tiles: exact, a few elements over (ragged), a whole CTA tile
  // over (for a cluster: its second CTA busy), a CTA tile and a few over.
  auto extents = [](int cta, int cluster, std::initializer_list<int> smalls) {
    std::set<std::int64_t> v;
    for (int a = 0; a <= 3; ++a)
      for (int r : {0, cta}) {
        v.insert(std::int64_t(a) * cta * cluster + r);
        for (int d : smalls) v.insert(std::int64_t(a) * cta * cluster + r + d);
      }
    v.erase(0);
    return v;
  };
  std::set<std::int64_t> ms = extents(s.cta_tile_m, s.cluster_m, {8}), ns = extents(s.cta_tile_n, s.cluster_n, {4, 8, 16});
  std::set<std::int64_t> ks;
  const int splits = std::max(1, s.splits), min_k_steps = s.stream ? 2 : splits;
  for (int a = 0; a <= std::max(s.stages, min_k_steps) + 2; ++a)
    for (int d : {0, 8, 16})
      if (ceil_div(std::int64_t(a) * s.tile_k + d, s.tile_k) >= min_k_steps) ks.insert(std::int64_t(a) * s.tile_k + d);
  ks.erase(0);
  std::vector<int> sms = {s.cluster_size(), 2 * s.cluster_size(), 132};
  if (s.stream) sms = {2, 3, 132};  // one SM would never share a tile

  using Rank = std::tuple<int, double>;  // (no phase wrap, work)
  std::optional<std::pair<Rank, ProxyProblem>> best;
  MatmulProblem q = like;
  for (std::int64_t n : ns)
    for (std::int64_t k : ks) {
      q.n = n;
      q.k = k;
      q.m = s.cta_tile_m;
      if (!valid_problem(q)) continue;  // alignment depends on N and K only
      for (std::int64_t m : ms)
        for (int sm : sms) {
          q.m = m;
          if (!(classify(q, s, sm) == want)) continue;
          const std::int64_t tiles = ceil_div(m, s.cta_tile_m) * ceil_div(n, s.cta_tile_n);
          if (s.stream && !stream_launch(tiles, ceil_div(k, s.tile_k), sm).shared_tile) continue;
          Launch l = launch_of(q, s, sm);
          // What the virtual device executes: every tile launched, padded, every K step.
          const double steps = s.stream ? double(ceil_div(k, s.tile_k)) : double(l.k_steps) * splits;
          double work = double(tiles) * steps * (double(s.cta_tile_m) * s.cta_tile_n * s.tile_k + 65536.0);
          Rank r{l.tiles_per_cta * l.k_steps > s.stages ? 0 : 1, work};
          if (!best || r < best->first) best = {{r, ProxyProblem{q, sm}}};
        }
    }
  if (!best) return std::nullopt;
  return best->second;
}

std::vector<ProblemClass> standard_classes(const MatmulProblem& like, const KernelShape& s,
                                           const std::function<bool(const MatmulProblem&)>& valid_problem) {
  const bool cluster = s.cluster_size() > 1;
  ProblemClass several;
  several.multi_tile = true;
  ProblemClass ragged;
  ragged.ragged_m = ragged.ragged_n = ragged.k_tail = true;
  ProblemClass third = ragged;
  third.multi_tile = true;
  if (cluster) third.idle_cta = true;
  std::vector<ProblemClass> out;
  for (ProblemClass c : {several, ragged, third}) {
    c.cluster = cluster;
    // Drop what this kernel cannot have, one flag at a time, the rarest first.
    for (bool* flag : {&c.ragged_n, &c.idle_cta, &c.ragged_m}) {
      if (proxy_problem(like, s, c, valid_problem)) break;
      *flag = false;
    }
    if (proxy_problem(like, s, c, valid_problem) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::optional<ProxyProblem> verification_proxy(const MatmulProblem& target, const KernelShape& s, int sm_count,
                                               const std::function<bool(const MatmulProblem&)>& valid_problem) {
  constexpr double kMaxEmulatedMacs = 1u << 27;
  std::optional<ProxyProblem> proxy = proxy_problem(target, s, classify(target, s, sm_count), valid_problem);
  if (!proxy && double(target.m) * double(target.n) * double(target.k) <= kMaxEmulatedMacs) proxy = ProxyProblem{target, sm_count};
  if (proxy) {
    proxy->problem.in_dtype = target.in_dtype;
    proxy->problem.out_dtype = target.out_dtype;
    proxy->problem.b_layout = target.b_layout;
  }
  return proxy;
}

}  // namespace mgpu::kernels
