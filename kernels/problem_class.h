// Classes of matmul problem, as a persistent tiled kernel sees them, and the small problem of
// each class a kernel is verified at. A verification on the virtual device is keyed by the
// kernel binary and the class (results/store.h: VerificationKey): every problem of a class
// drives the same code paths of that binary -- partial tiles at the M/N edges, a partial last
// K step, a CTA walking several tiles (barrier phases carried across tiles), a CTA of a
// cluster with no tile. Contract: classify() is total; proxy_problem() returns the cheapest
// problem (and the SM count to launch it for) of exactly the class asked, or nullopt when no
// problem of that class exists for the kernel (e.g. ragged N with 8-column tiles when N must
// be a multiple of 8). Both take the kernel's tile geometry, so this file needs no template.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/matmul_problem.h"

namespace mgpu::kernels {

// What a config's kernel tiles and pipelines by (MatmulTemplate::kernel_shape()).
struct KernelShape {
  int cta_tile_m = 128, cta_tile_n = 128;  // one CTA's output tile
  int cluster_m = 1, cluster_n = 1;        // CTA tiles per cluster tile
  int tile_k = 64;                         // K per pipeline step
  int stages = 4;                          // the SMEM ring's depth
  int splits = 1;                          // K ranges per tile (split-K): work units are tiles x splits
  bool stream = false;                     // stream-K: each CTA an equal share of tiles x k-steps
  int cluster_size() const { return cluster_m * cluster_n; }
};

struct ProblemClass {
  bool ragged_m = false;    // M is not a multiple of the CTA tile
  bool ragged_n = false;
  bool k_tail = false;      // K is not a multiple of tile_k
  bool multi_tile = false;  // some CTA computes more than one tile (with split-K: work unit)
  bool idle_cta = false;    // some CTA of a cluster has no tile of its own
  bool cluster = false;     // the kernel runs clusters of CTAs
  // "aligned", or the flags joined by '+' in the order above, e.g. "ragged_m+k_tail+cluster".
  std::string key() const;
  bool operator==(const ProblemClass&) const = default;
};

// The class of problem `p` for a kernel of shape `s` launched for `sm_count` SMs.
ProblemClass classify(const MatmulProblem& p, const KernelShape& s, int sm_count);

struct ProxyProblem {
  MatmulProblem problem;  // dtypes and layout as asked; M, N, K small
  int sm_count = 1;       // SMs the persistent grid is sized for
};

// The cheapest problem of class `want` with `like`'s dtypes and layout that `valid_problem`
// accepts (the template's check_problem), with at least one K step per split (stream-K: two, and
// a launch in which some tile is shared by CTAs, so the partial sums are exercised). Preferred: one
// where a CTA runs more pipeline steps than the ring has stages, so every barrier's phase wraps.
std::optional<ProxyProblem> proxy_problem(const MatmulProblem& like, const KernelShape& s, const ProblemClass& want,
                                          const std::function<bool(const MatmulProblem&)>& valid_problem);

// Where a kernel of shape `s` is proven before it ranks for `target` on `sm_count` SMs: the
// cheapest problem of the target's class (with the target's dtypes and layout), else the target
// itself if it is small enough to emulate (at most 2^27 multiply-adds), else nullopt (the class
// has no problem the virtual device can run).
std::optional<ProxyProblem> verification_proxy(const MatmulProblem& target, const KernelShape& s, int sm_count,
                                               const std::function<bool(const MatmulProblem&)>& valid_problem);

// The classes `verify --all` proves each kernel at when no problem is given: several tiles per
// CTA; ragged in M, N and K; and ragged with several tiles per CTA or, for clusters, a CTA with
// no tile. Flags a kernel cannot have (ragged N for 8-column tiles) are dropped.
std::vector<ProblemClass> standard_classes(const MatmulProblem& like, const KernelShape& s,
                                           const std::function<bool(const MatmulProblem&)>& valid_problem);

}  // namespace mgpu::kernels
