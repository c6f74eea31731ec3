#include "kernels/matmul_sm90/validity.h"

#include <limits>
#include <fmt/format.h>

#include "core/error.h"
#include "kernels/matmul_common/shape_rules.h"

namespace mgpu::kernels::sm90 {

namespace {

// What split_k and stream_k both need: partial tiles are per CTA (no cluster multicasting one
// operand for the same k-steps), and the sums fit beside the partial loads.
std::optional<Rejection> reducing_rule(const MatmulConfig& c, const char* rule, const char* what) {
  if (c.cluster_dimension != ClusterDim::None)
    return Rejection{rule, fmt::format("a 2-CTA cluster multicasts one operand tile to both CTAs for the same k-steps; "
                                       "{} per CTA are not built (cluster_dimension must be \"none\")", what)};
  if (c.accumulator_registers() > kMaxSplitAccumulatorRegisters)
    return Rejection{rule, fmt::format("a {}x{} tile's sums ({} registers per thread) beside the partial loads and the "
                                       "next tile's accumulator spill above {} (validity.h)", c.tile_m, c.tile_n,
                                       c.accumulator_registers(), kMaxSplitAccumulatorRegisters)};
  return std::nullopt;
}

}  // namespace

void check_problem(const MatmulProblem& p) { check_tma_problem(p); }

std::optional<Rejection> why_invalid(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch) {
  auto reject = [](const char* rule, std::string reason) { return Rejection{rule, std::move(reason)}; };
  const int out = size_in_bytes(p.out_dtype);

  if (!c.swap_ab && (c.tile_m < 64 || c.tile_m > 256 || c.tile_m % 64 != 0))
    return reject("shape", fmt::format("tile_m {} is not 64, 128, 192 or 256 (wgmma covers 64 rows; swap_ab \"yes\" "
                                       "takes 8..64, as wgmma's N)", c.tile_m));
  if (c.swap_ab && (c.tile_m < 8 || c.tile_m > 64 || c.tile_m % 8 != 0))
    return reject("swap_ab", fmt::format("tile_m {} is not a multiple of 8 in [8, 64]: with swap_ab it is wgmma's N, and "
                                         "from 64 rows up the unswapped kernel issues the same MMAs", c.tile_m));
  if (c.swap_ab && (c.tile_n < 64 || c.tile_n > 256 || c.tile_n % 64 != 0))
    return reject("swap_ab", fmt::format("tile_n {} is not 64, 128, 192 or 256: with swap_ab it is wgmma's M (64 rows)",
                                         c.tile_n));
  if (c.swap_ab && c.epi_tile_m != 64)
    return reject("swap_ab", fmt::format("epi_tile_m {} must stay 64 with swap_ab: a piece is the warpgroup's tile_m rows",
                                         c.epi_tile_m));
  if (c.tile_n < 8 || c.tile_n > 256 || c.tile_n % 8 != 0)
    return reject("shape", fmt::format("tile_n {} is not a multiple of 8 in [8, 256] (wgmma N)", c.tile_n));
  if (auto r = operand_shape_rule(p, {c.tile_n, c.tile_k, c.max_concurrent_steps, c.grid_tile_width})) return r;

  // Sizes below the smallest legal one first: 0 would divide by zero below, a negative one pass.
  if (!c.swap_ab && (c.epi_tile_m < 64 || c.epi_tile_m % 64 != 0 || c.tile_m % c.epi_tile_m != 0))
    return reject("epilogue", fmt::format("epi_tile_m {} must be a multiple of 64 dividing tile_m {}", c.epi_tile_m,
                                          c.tile_m));
  if (c.epi_tile_n < 8 || c.epi_tile_n % 8 != 0 || c.tile_n % c.epi_tile_n != 0)
    return reject("epilogue", fmt::format("epi_tile_n {} must be a multiple of 8 dividing tile_n {}", c.epi_tile_n,
                                          c.tile_n));
  if (c.epi_tile_n * out % 16 != 0 || c.epi_tile_n > 256 || c.epi_rows() > 256)
    return reject("epilogue", fmt::format("a {}x{} epilogue piece is no TMA box (inner extent a multiple of 16 "
                                          "bytes, sides at most 256)", c.epi_rows(), c.epi_tile_n));

  // No multicast rule: each CTA of a pair loads half of the shared operand's rows to the
  // half's offset and multicasts it. The swizzle pattern is a function of the absolute shared
  // address (PTX ISA 9.7.15.5.1.2.2, Matrix Descriptor Format: a pattern starts on a
  // 1024/512/256-byte boundary for 128B/64B/32B swizzle, and a matrix starting elsewhere names
  // its phase in the base offset), so TMA writes a half exactly where a whole-tile load would
  // have, wherever the half starts. What the ISA does require, a 128-byte aligned destination
  // for cp.async.bulk.tensor, the shape rules already give: a half is at least 4 rows (tile_n is
  // a multiple of 8) of at least 32 bytes. plan_loads() checks it. Until 2026-11-23 a rule here
  // demanded 1024-byte halves and rejected configs the virtual device runs correctly (issue 17).

  if (c.pingpong() && c.wg_dimension != Dim::M)
    return reject("consumers", "wg_dimension says how cooperating warpgroups split a tile; pingpong warpgroups each "
                               "compute whole tiles, so wg_dimension N runs the same kernel as M (use M)");
  if (c.pingpong() && c.reduces())
    return reject("consumers", fmt::format("{}'s partial tiles are kept per cooperating warpgroup (a workspace slot "
                                           "and counter each); pingpong warpgroups with partials are not built",
                                           to_string(c.schedule)));
  if (c.schedule != Schedule::SplitK && c.split_k != 1)
    return reject("split_k", fmt::format("split_k {} needs schedule \"split_k\" ({} decides who runs which k-steps "
                                         "itself)", c.split_k, to_string(c.schedule)));
  if (c.schedule == Schedule::StreamK) {
    if (auto r = reducing_rule(c, "stream_k", "stream-K shares")) return r;
    const SplitWorkspace counters = split_workspace(p, c, 0);  // no CTA: the counters alone
    const std::int64_t per_cta = 2LL * c.cta_tile_m() * c.cta_tile_n() * 4;
    if (counters.counter_bytes + per_cta > kMaxWorkspaceBytes)
      return reject("stream_k", fmt::format("{} tiles' arrival counters and one CTA's partials need more than the {} MiB "
                                            "of workspace a caller budgets", counters.tiles, kMaxWorkspaceBytes >> 20));
  }
  if (c.schedule == Schedule::SplitK) {
    if (c.split_k < 2 || c.split_k > 64)
      return reject("split_k", fmt::format("split_k {} is not in [2, 64] (1 is the data_parallel schedule)", c.split_k));
    if (auto r = reducing_rule(c, "split_k", "split ranges")) return r;
    // A launch holds the count to what the shape can use (effective_split_k()); a config whose
    // count would be held lower runs the same launch as the lower count, so it is rejected here
    // and the search never measures one launch twice.
    const std::int64_t k_steps = (p.k + c.tile_k - 1) / c.tile_k;
    if (c.split_k > k_steps)
      return reject("split_k", fmt::format("split_k {} exceeds the {} k-steps of K {} at tile_k {}: a range would be "
                                           "empty (a launch runs split_k {})", c.split_k, k_steps, p.k, c.tile_k,
                                           effective_split_k(p, c)));
    if (effective_split_k(p, c) < c.split_k) {
      const std::int64_t tiles = ((p.m + c.cta_tile_m() - 1) / c.cta_tile_m()) * ((p.n + c.cta_tile_n() - 1) / c.cta_tile_n());
      // Saturated, not wrapped: 2^31-wide problems reach 2^65 bytes, which 64 bits held as 0.
      std::int64_t bytes = 0;
      const bool overflow = __builtin_mul_overflow(tiles, static_cast<std::int64_t>(c.split_k), &bytes) ||
                            __builtin_mul_overflow(bytes, static_cast<std::int64_t>(c.cta_tile_m()), &bytes) ||
                            __builtin_mul_overflow(bytes, static_cast<std::int64_t>(c.cta_tile_n()), &bytes) ||
                            __builtin_mul_overflow(bytes, std::int64_t{4}, &bytes);
      const std::string needs = overflow ? fmt::format("more than {}", std::numeric_limits<std::int64_t>::max())
                                         : fmt::format("{}", bytes);
      return reject("split_k", fmt::format("needs {} bytes of workspace ({} tiles x {} f32 partials of {}x{}), more than "
                                           "the {} MiB a caller budgets (cuBLAS's Hopper recommendation; a launch runs "
                                           "split_k {})", needs, tiles,
                                           c.split_k, c.cta_tile_m(), c.cta_tile_n(), kMaxWorkspaceBytes >> 20,
                                           effective_split_k(p, c)));
    }
  }

  std::int64_t smem = smem_plan(p, c).total_bytes();
  if (smem > arch.smem_per_block_optin)
    return reject("smem", fmt::format("needs {} bytes of SMEM, {} has {}", smem, arch.name, arch.smem_per_block_optin));

  if (c.accumulator_registers() > kMaxAccumulatorRegisters)
    return reject("registers", fmt::format("a {}x{} f32 accumulator is {} registers per thread; more than {} spills",
                                           c.tile_m, c.tile_n, c.accumulator_registers(), kMaxAccumulatorRegisters));
  return std::nullopt;
}

}  // namespace mgpu::kernels::sm90
