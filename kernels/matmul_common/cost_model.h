// A deterministic analytic estimate of a persistent matmul kernel's time, for dry runs and for
// ranking when no GPU is present; each template describes its config as a PersistentCost.
// Everything it predicts is labelled "model" downstream. Terms: tensor-core time for the
// padded tile work, spread over the SMs with wave quantization; DRAM time for the operand
// tiles a wave of clusters must fetch (the planar-snake band decides how many distinct A and B
// tiles a wave touches; L2 serves the rest); a pipeline factor (too few stages cannot hide
// load latency); per-tile epilogue and launch overheads. Contract: the estimate is never below
// the roofline floor max(flops / peak, min_bytes / bandwidth) and never grows when only
// stages are added.
//
// Lint penalties (issue 19). Given the compiled kernel's defects (kernel_defects.h), each lint
// adds the time below; without evidence (defects.known false) nothing is added. Penalties are
// added after the max of the compute, memory and roofline terms, never overlapped with them:
// a linted kernel is always predicted slower than its clean twin (in a memory-bound regime the
// real cost may be partly hidden; we prefer never to tie). Clocks are the device's boost clock;
// per SM, shared memory and L1 move kSmemBytesPerClock = 128 bytes per clock (one wavefront:
// 32 banks x 4 bytes), and the busiest SM runs `waves` tiles.
//  - serialised-mma: a wait between consecutive MMAs of a k-step drains the tensor pipe, so
//    the next MMA's operand fetch from SMEM no longer overlaps the current one's math. Per
//    serialised k-step each issuer loses mmas_per_step fetches of mma_operand_bytes at 128
//    B/clock (each of the step's MMAs waits for the one before it, the first for the previous
//    step's last) (a lower bound of the drain: it leaves out the accumulator write-back and the
//    issue latency, for which we have no measurement). Only the peeled first k-step of each
//    tile (FirstStep) or every k-step (EveryStep), as the SASS shows.
//  - spills: every spilled byte is stored and loaded back at least once per tile, by every
//    thread of the CTA, through L1 at 128 B/clock: 2 x spill_bytes x threads / 128 clocks per
//    tile. (Spills inside the k-loop are the next lint's.)
//  - local-memory-in-main-loop: each LDL/STL of a k-step is one warp-wide access of at least
//    4 bytes a lane (128 bytes, one L1 wavefront) by each of the main_loop_warps warps:
//    ops x main_loop_warps clocks per k-step, every k-step. A lower bound (L1 hits assumed,
//    the load latency on the critical path is not counted).
//  - membar-in-main-loop: a GPU-wide MEMBAR holds its warp until every outstanding access of
//    the warp is visible GPU-wide; the consumer warps all pass one per k-step, in parallel, so
//    it is a latency on the k-loop: kWideMembarClocks (730) per MEMBAR per k-step. Measured on
//    the H100 (README, "The third run on a GPU"): the 2-CTA clustered kernels whose remote
//    arrive compiled to MEMBAR.ALL.GPU, against the same kernels without it, lost 0.34-0.42 us
//    per k-step of the busiest SM (five figures: ncu durations and bench times, clusters along
//    M and N, 128 and 192 wide tiles; median 0.368 us = 730 clocks at 1980 MHz).
//  - bank-conflicts: n-way conflicts (wavefronts / ideal over the kernel's shared stores and
//    loads, which in these templates are the epilogue's staging stores) multiply the
//    epilogue's SMEM store time, cta_tile_m x cta_tile_n x out_bytes / 128 clocks per tile
//    conflict-free: (n - 1) times that is added per tile, less the part the template overlaps
//    with MMAs (epilogue_hidden).
//  - setmaxnreg-dropped: the register split never happens, so every MMA thread is capped at
//    the uniform budget (uniform_registers: registers per SM / threads, a multiple of 8)
//    instead of the consumer's raised count. Where the cap binds, ptxas spills or serialises
//    (those are lints of their own, with the costs above); what remains is scheduling room
//    lost beside the accumulator, which we have not measured: charged as kRegisterCapLoss (2%)
//    of the tensor-core time, scaled by the accumulator's share of the capped budget
//    (accumulator_registers / uniform_registers, at most 1). An estimate chosen small, so it
//    orders a dropped split behind a kept one without outweighing a structural difference;
//    replace it with a measured figure (the same config assembled by ptxas and by nvJitLink,
//    timed on an H100) when a GPU is at hand.
//
// Split-K (splits > 1): a tile's K loop is cut into `splits` ranges run by different CTAs, so
// the work units are tiles x splits and each has k_iters / splits steps (the longest,
// rounded up); a wave of units covers clusters / splits tiles over their whole K, so operand
// traffic per wave is that of the tiles it finishes. Each unit also writes its f32 partial
// tile and the last of a tile reads all of them back (charged to DRAM, though L2 often keeps
// them), and waits once for an atomic's round trip (kFixupUs, an estimate until measured).
// Stream-K: the grid is one CTA per SM (no more than the iterations), each running an equal
// share of tiles x k_iters iterations, so the busiest SM runs ceil(I / G) k-steps instead of
// whole waves of tiles; about two partial tiles per CTA go through the workspace (its first
// and last tile, when shared), and each CTA waits for at most two atomics.
#pragma once

#include <string>
#include <vector>

#include "core/arch.h"
#include "kernels/matmul_common/config_params.h"
#include "kernels/matmul_common/kernel_defects.h"
#include "kernels/matmul_problem.h"

namespace mgpu::kernels {

struct LintPenalty {
  std::string code;  // the lint's code
  double ms = 0;     // what it added to the prediction
};

struct Prediction {
  double ms = 0;
  double compute_ms = 0, memory_ms = 0, overhead_ms = 0;
  double roofline_ms = 0;  // the floor no config can beat
  double lint_ms = 0;      // the sum of lint_penalties
  std::vector<LintPenalty> lint_penalties;
};

struct PersistentCost {
  int cta_tile_m = 128, cta_tile_n = 128;  // output tile of one CTA
  int cluster_m = 1, cluster_n = 1;        // CTAs per cluster along M and N
  int tile_k = 64;
  int splits = 1;                          // K ranges per output tile (split-K)
  bool stream = false;                     // stream-K (splits is then 1)
  int max_concurrent_steps = 4;
  Dim grid_minor_dim = Dim::N;
  int grid_tile_width = 1;
  double epilogue_pieces = 1;     // SMEM round trips per CTA tile
  double epilogue_hidden = 0;     // fraction of the epilogue overlapped with MMAs (0..1)
  double mma_efficiency = 1;      // how well the operand feed keeps the tensor cores busy (0..1]
  // What the lint penalties are computed from (see above).
  int threads = 128;                 // per CTA
  int mma_issuers = 1;               // warpgroups (or threads) issuing MMAs side by side
  int mmas_per_step = 1;             // MMA instructions per k-step per issuer
  double mma_operand_bytes = 0;      // SMEM bytes one MMA instruction reads (A and B)
  int main_loop_warps = 1;           // warps that run the k-loop's instructions
  double accumulator_registers = 0;  // f32 accumulators per MMA thread (0: in tensor memory)
  int uniform_registers = 255;       // per thread without a setmaxnreg split
};

Prediction predict_persistent(const MatmulProblem& p, const PersistentCost& c, const core::DeviceSpec& device,
                              const KernelDefects& defects = {});

}  // namespace mgpu::kernels
