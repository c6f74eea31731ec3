// The Blackwell (sm_100a) matmul kernel: persistent, warp-specialized, TMA + tcgen05 with the
// f32 accumulator in tensor memory. 256 threads: warp 0 loads (one thread issues the TMA loads
// of A and B into a ring of SMEM stages guarded by "full"/"empty" mbarriers), warp 1 issues
// the MMAs (one thread; tcgen05.commit releases each stage when its MMAs are done), warpgroup 1
// is the epilogue (TMEM -> registers -> swizzled SMEM piece -> TMA store). The accumulator is
// double-buffered in TMEM, so the epilogue of one tile overlaps the MMAs of the next.
// Collective configs run a 2-CTA cluster: each CTA loads its own tile_m rows of A and its half
// of B (cta_group::2 loads completing on the even CTA's barrier), the even CTA issues one
// cta_group::2 MMA over both, and each CTA drains its own 128 TMEM lanes.
// Contract: like the Hopper kernel, the module text depends only on the config and the
// problem's dtypes and B layout; kernel arguments are three CUtensorMap pointers (A, B, C),
// then i32 M, N, K, minor_is_n, band_width; the tensor maps' boxes are in the result.
#pragma once

#include "core/arch.h"
#include "core/built_kernel.h"
#include "kernels/matmul_common/launch_math.h"
#include "kernels/matmul_common/tile_walk.h"
#include "kernels/matmul_problem.h"
#include "kernels/matmul_sm100/config.h"

namespace mgpu::kernels::sm100 {

core::BuiltKernel build_matmul(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch);
// Builds without the validity rules, so tests can show that a rejected config really fails.
core::BuiltKernel build_matmul_unchecked(const MatmulProblem& p, const MatmulConfig& c);

// How CTAs walk the output: a CTA's tile is tile_m x mma_n; a collective pair stacks two
// along M.
TileWalkShape walk_shape(const MatmulConfig& c);
unsigned persistent_grid(const MatmulProblem& p, const MatmulConfig& c, int sm_count);
// The launch arithmetic's view of the config (launch_math.h): data-parallel, no workspace.
mgpu_lm_matmul launch_consts(const MatmulConfig& c);

}  // namespace mgpu::kernels::sm100
