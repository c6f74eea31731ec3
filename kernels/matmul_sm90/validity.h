// Which configs of the Hopper matmul template can work, stated once. Contract:
// check_problem() throws Error{InvalidInput} when the template cannot run a problem at all
// (kernels/matmul_common/shape_rules.h: TMA needs 16-byte aligned row strides); why_invalid() returns the first rule a config
// breaks, with a reason, or nullopt when the config is valid. Rules, in order:
//   shape      tile sizes the instructions can express (wgmma M=64 rows, N<=256, k16 steps),
//              and the shared operand-tile rules
//   swap_ab    with swap_ab, tile_m is wgmma's N (8..64) and tile_n its M (multiples of 64)
//   epilogue   epilogue pieces that tile the warpgroup tile and suit a TMA store
//   consumers  pingpong with wg_dimension M (N would be the same kernel) and data_parallel
//   split_k    a split count only with the split_k schedule, unclustered, tiles whose sums fit
//              beside the partial loads, no more ranges than k-steps, and a workspace of at
//              most kMaxWorkspaceBytes
//   stream_k   unclustered, tiles whose sums fit (as split_k), and counters that leave room in
//              the workspace for a CTA's partials (stream_k_grid() fits the grid to the rest)
//   smem       stages x operand tiles + epilogue buffers + barriers <= the arch's opt-in SMEM
//   registers  the f32 accumulator fits the consumer warpgroups' registers without spilling
#pragma once

#include <optional>
#include <string>

#include "core/arch.h"
#include "kernels/matmul_problem.h"
#include "kernels/rejection.h"
#include "kernels/matmul_sm90/config.h"

namespace mgpu::kernels::sm90 {

using kernels::Rejection;

// Accumulator registers per thread the consumers can hold without spills. The consumer
// warpgroups raise their budget to 232 with setmaxnreg (the producer drops to 40), and need
// about 30 besides the accumulator. Calibrated with whole-program ptxas 13.0, where setmaxnreg
// takes effect: 200 compiles cleanly, 208 spills; tests/test_matmul_sm90.cc checks the bound
// both ways. (Until 2026-11-23 the kernels were assembled by nvJitLink, which drops setmaxnreg,
// and the bound was 136: the 168 registers of the kernel's entry budget. The nvJitLink fallback
// still spills between 137 and 200, which `compile` shows as spill bytes.)
inline constexpr int kMaxAccumulatorRegisters = 200;

// Whether the kernel overlaps a tile's epilogue with the next tile's first MMAs: the two
// accumulators are live together then, so both must fit that same bound (tiles of at most
// 96 registers, e.g. 64x192 per warpgroup). Not a tuning parameter: where it fits it only
// hides work, and the whole-space SASS test shows it spills nowhere. (split_k tiles are at most
// kMaxSplitAccumulatorRegisters, so they always overlap.)
// (pingpong: never -- each warpgroup's epilogue runs under the other warpgroup's MMAs instead.)
inline bool overlaps_epilogue(const MatmulConfig& c) {
  return !c.pingpong() && 2 * c.accumulator_registers() <= kMaxAccumulatorRegisters;
}

// A split_k epilogue holds the tile's sums and the partial loads beside the next tile's
// accumulator. Measured with ptxas 13.0: 64 registers (64x128, 16x256 ...) compile cleanly;
// 96 (64x192) spilled 4 bytes with the epilogue overlapped and 12 (swapped) without it, and
// 128 (128x128) 496 bytes.
inline constexpr int kMaxSplitAccumulatorRegisters = 64;

void check_problem(const MatmulProblem& p);
std::optional<Rejection> why_invalid(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch);

}  // namespace mgpu::kernels::sm90
