// The Blackwell matmul template's TuningConfig, with Pallas:MGPU's names: tile_m, tile_n,
// tile_k (what one CTA loads of A and B per step), max_concurrent_steps (SMEM pipeline depth),
// collective (1: a 2-CTA cluster runs one cta_group::2 MMA of twice the size, each CTA loading
// its own A rows and half of the pair's B), epilogue_tile_n (columns per TMEM -> SMEM -> TMA
// store piece), grid_minor_dim and grid_tile_width (the planar-snake tile order).
// Contract: from_tuning_config() checks names and types (Error{InvalidInput}); the derived
// sizes below are the single source of truth for the kernel builder and the validity rules.
#pragma once

#include <cstdint>

#include "core/ir/smem_plan.h"
#include "core/tuning_config.h"
#include "kernels/matmul_common/config_params.h"
#include "kernels/matmul_problem.h"

namespace mgpu::kernels::sm100 {

struct MatmulConfig {
  int tile_m = 128;
  int tile_n = 128;
  int tile_k = 64;
  int max_concurrent_steps = 4;
  int collective = 1;
  int epilogue_tile_n = 64;
  Dim grid_minor_dim = Dim::N;
  int grid_tile_width = 8;

  int cluster_size() const { return collective ? 2 : 1; }
  int mma_m() const { return tile_m * cluster_size(); }  // rows of one (pair's) MMA
  int mma_n() const { return tile_n * cluster_size(); }  // = the columns of a CTA's output tile
  // TMEM columns the double-buffered f32 accumulator needs, and the power-of-two allocation.
  int tmem_columns() const { return 2 * mma_n(); }
  int tmem_alloc_columns() const;

  core::TuningConfig to_tuning_config() const;
  static MatmulConfig from_tuning_config(const core::TuningConfig& c);
  // One parameter of `c` set from its config value (a walk of the space updates a parsed config
  // this way); an unknown name or a value of the wrong type throws Error{InvalidInput}.
  static void set_param(MatmulConfig& c, std::string_view name, const core::ParamValue& v);
};

// The default search space (spans Pallas:MGPU's Blackwell sweep).
core::ParamSpace default_space();

// The kernel's dynamic SMEM: "a" and "b" (max_concurrent_steps stages of tile_m x tile_k and
// tile_n x tile_k), "epilogue" (two swizzled tile_m x epilogue_tile_n pieces), the barrier
// rings "full", "empty" (operand stages), "acc_full", "acc_empty" (the two accumulator
// buffers), and "tmem_slot" (where tcgen05.alloc writes the TMEM address).
core::ir::SmemPlan smem_plan(const MatmulProblem& p, const MatmulConfig& c);
std::int64_t a_stage_bytes(const MatmulProblem& p, const MatmulConfig& c);
std::int64_t b_stage_bytes(const MatmulProblem& p, const MatmulConfig& c);
// Bytes of one swizzle atom of an epilogue row (the TMA store box's inner extent).
int epilogue_atom_bytes(const MatmulProblem& p, const MatmulConfig& c);

}  // namespace mgpu::kernels::sm100
