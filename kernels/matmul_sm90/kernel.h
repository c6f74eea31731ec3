// The Hopper (sm_90a) matmul kernel: persistent, warp-specialized, TMA + wgmma, pipelined
// max_concurrent_steps deep. Warpgroup 0 produces (one thread issues the TMA loads of A and B
// into a ring of SMEM stages guarded by "full"/"empty" mbarrier rings); warpgroups 1 and 2
// consume (each owns a tile_m x tile_n f32 accumulator in registers, fed by wgmma straight from
// SMEM, one MMA group kept in flight) and run the epilogue (accumulator -> SMEM piece -> TMA
// store). CTAs loop over output tiles in planar-snake order; with a cluster, the two CTAs of a
// pair compute neighbouring tiles and each loads half of the shared operand, multicast to both.
// Contract: build_matmul() returns module text that depends only on the config and the
// problem's dtypes and B layout -- M, N, K and the tile order are kernel arguments -- so the
// compile cache serves every shape and every grid_minor_dim / grid_tile_width from one
// binary. Kernel arguments, in order: three pointers to CUtensorMaps in global memory
// (A, B, C), then i32 M, N, K, minor_is_n, band_width. The TMA boxes the kernel expects are in
// the returned tensor maps (A, B, C; base addresses are filled in at run time).
#pragma once

#include <string>

#include "core/arch.h"
#include "core/built_kernel.h"
#include "kernels/matmul_common/tile_walk.h"
#include "kernels/matmul_problem.h"
#include "kernels/matmul_sm90/config.h"

namespace mgpu::kernels::sm90 {

// tensor_maps: A, B, C (in kernel-argument order).
using BuiltMatmul = core::BuiltKernel;

BuiltMatmul build_matmul(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch);
// Builds without the validity rules, so tests can show that a rejected config really fails;
// `faulty` builds the faulty twins a checker must catch (never used outside tests).
struct FaultyVariant {
  // split_k: the last range starts its sum from its own partial and adds the others in split
  // order, so the association, and the rounding, depends on which range finished last.
  bool sum_in_arrival_order = false;
};
BuiltMatmul build_matmul_unchecked(const MatmulProblem& p, const MatmulConfig& c, const FaultyVariant& faulty = {});

// The CTA tile and cluster the persistent tile walk (kernels/matmul_common/tile_walk.h) uses,
// and the K ranges a launch for `p` runs (effective_split_k()).
TileWalkShape walk_shape(const MatmulProblem& p, const MatmulConfig& c);

// Persistent grid: one CTA per SM (whole clusters), no more CTAs than tiles.
unsigned persistent_grid(const MatmulProblem& p, const MatmulConfig& c, int sm_count);

}  // namespace mgpu::kernels::sm90
