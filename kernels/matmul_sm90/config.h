// The Hopper matmul template's TuningConfig, with Pallas:MGPU's names: tile_m, tile_n, tile_k
// (per compute warpgroup), max_concurrent_steps (SMEM pipeline depth), epi_tile_m/epi_tile_n
// (epilogue pieces stored through SMEM with TMA), grid_minor_dim and grid_tile_width (the
// planar-snake tile order), wg_dimension (which dimension the two compute warpgroups split)
// and cluster_dimension (none, M or N: a 2-CTA cluster that multicasts the shared operand).
// swap_ab ("yes"): the MMAs compute C^T = B^T . A^T, so M is wgmma's N (8..256 in steps of 8)
// and tile_m may be as small as 8 -- for decode, where M is a handful of tokens; the output
// is still C (the epilogue transposes the fragments on their way through SMEM).
// schedule: "data_parallel" (each output tile is one CTA's whole K loop), "split_k" (each tile's
// K loop is cut into split_k ranges computed by different CTAs) or "stream_k" (one CTA per SM,
// each taking an equal share of all tiles' k-steps laid end to end, so a tile may be shared by
// two or more CTAs). A unit that does not cover its whole tile stores its f32 partial tile in a
// workspace and the last to finish sums all of them in segment order, so the result does not
// depend on which finished last. split_k is a run-time parameter: the split counts of one config
// share a binary (stream_k's is its own).
// Contract: from_tuning_config() checks names and domains (Error{InvalidInput}); the derived
// sizes below are the single source of truth for the kernel builder and the validity rules.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/smem_plan.h"
#include "core/tuning_config.h"
#include "kernels/matmul_common/config_params.h"
#include "kernels/matmul_common/launch_math.h"
#include "kernels/matmul_problem.h"

namespace mgpu::kernels::sm90 {

enum class ClusterDim { None, M, N };

// The split_k schedule's workspace bound: cuBLAS asks its callers for 32 MiB of workspace on
// Hopper, so a production caller budgets that much for a matmul; a split that needs more (many
// tiles, where split-K has nothing to win anyway) is not allocated (effective_split_k()).
inline constexpr std::int64_t kMaxWorkspaceBytes = 32LL << 20;
enum class Schedule { DataParallel, SplitK, StreamK };
// How the two compute warpgroups share the work: cooperative (both on every tile, split along
// wg_dimension) or pingpong (alternate tiles, each the whole CTA tile: one's MMAs run while the
// other's epilogue stores, ordered by named barriers so their MMA phases never overlap).
enum class Consumers { Cooperative, PingPong };

struct MatmulConfig {
  int tile_m = 128;
  int tile_n = 128;
  int tile_k = 64;
  int max_concurrent_steps = 4;
  int epi_tile_m = 64;
  int epi_tile_n = 64;
  Dim grid_minor_dim = Dim::N;
  int grid_tile_width = 8;
  Dim wg_dimension = Dim::M;
  ClusterDim cluster_dimension = ClusterDim::None;
  bool swap_ab = false;
  Schedule schedule = Schedule::DataParallel;
  int split_k = 1;  // K ranges per output tile (schedule split_k: 2 or more)
  Consumers consumers = Consumers::Cooperative;

  // Whether some units leave partial tiles to reduce (split_k, stream_k): the kernel takes a
  // workspace and its split count.
  bool reduces() const { return schedule != Schedule::DataParallel; }

  // CTA tile: the two cooperating warpgroups side by side along wg_dimension; with pingpong a
  // warpgroup's tile is the CTA's.
  bool pingpong() const { return consumers == Consumers::PingPong; }
  int cta_tile_m() const { return tile_m * (!pingpong() && wg_dimension == Dim::M ? 2 : 1); }
  int cta_tile_n() const { return tile_n * (!pingpong() && wg_dimension == Dim::N ? 2 : 1); }
  int cluster_size() const { return cluster_dimension == ClusterDim::None ? 1 : 2; }
  int accumulator_registers() const { return tile_m * tile_n / 128; }  // f32 per thread
  // wgmma's M and N for one warpgroup: its instructions are mma_m (64) rows by mma_n columns,
  // mma_blocks() of them per k16 step.
  int mma_rows() const { return swap_ab ? tile_n : tile_m; }   // a multiple of 64
  int mma_n() const { return swap_ab ? tile_m : tile_n; }
  int mma_blocks() const { return mma_rows() / 64; }
  // Rows of C in one epilogue piece: epi_tile_m, or with swap_ab the warpgroup's tile_m rows.
  int epi_rows() const { return swap_ab ? tile_m : epi_tile_m; }

  core::TuningConfig to_tuning_config() const;
  static MatmulConfig from_tuning_config(const core::TuningConfig& c);
  // One parameter of `c` set from its config value (a walk of the space updates a parsed config
  // this way); an unknown name or a value of the wrong type throws Error{InvalidInput}.
  static void set_param(MatmulConfig& c, std::string_view name, const core::ParamValue& v);
};

std::string_view to_string(ClusterDim d);
std::string_view to_string(Schedule s);
std::string_view to_string(Consumers c);

// The default search space (spans Pallas:MGPU's own sweeps).
core::ParamSpace default_space();

// The kernel's dynamic SMEM: regions "a" and "b" (max_concurrent_steps stages each),
// "epilogue" (one epi_tile_m x epi_tile_n buffer per compute warpgroup, 1024-aligned atoms), "full" and "empty"
// (the two barrier rings), "tile_slot" (the producer's tile-index handoff). The kernel builder
// and the validity rules both use this plan. With split_k, "ticket" holds each consumer
// warpgroup's arrival ticket (its leader's atomic, handed to the other threads).
core::ir::SmemPlan smem_plan(const MatmulProblem& p, const MatmulConfig& c);
std::int64_t a_stage_bytes(const MatmulProblem& p, const MatmulConfig& c);  // cta_tile_m x tile_k
std::int64_t b_stage_bytes(const MatmulProblem& p, const MatmulConfig& c);  // cta_tile_n x tile_k

// The epilogue's staging layout: a piece (epi_tile_m rows) is kept as column atoms, each
// epilogue_atom_bytes() of every row, the widest TMA swizzle span (128, 64, 32) that divides a
// piece row, or 16 (unswizzled) when none does. Each atom is one TMA store box, swizzled as
// the store reads it, so the fragment stores into it hit 32 distinct banks (kernel.cc).
int epilogue_atom_bytes(const MatmulProblem& p, const MatmulConfig& c);

// The K ranges a launch for `p` really uses: split_k, held to the problem's k-steps (a range is
// never empty) and to the workspace bound kMaxWorkspaceBytes (validity.h), at least 1; 1 for
// data_parallel. The launcher passes this count, so a split config tuned for one shape runs
// correctly on any other (an export's nearest-shape lookup hands it to shapes it was not tuned
// on); the validity rules reject a config whose count would be held below split_k, so the
// search never meets two configs that run the same launch.
int effective_split_k(const MatmulProblem& p, const MatmulConfig& c);

// The stream_k schedule's grid for `p` on `sm_count` SMs: one CTA per SM, no more than the
// tiles' k-steps, and no more than kMaxWorkspaceBytes holds partial slots for (two per CTA).
unsigned stream_k_grid(const MatmulProblem& p, const MatmulConfig& c, int sm_count);

// The global workspace of a split_k or stream_k launch for `p` on `sm_count` SMs, allocated by
// the launcher and zeroed once: first one u32 arrival counter per (output tile, consumer
// warpgroup), which every launch leaves at zero again, then the f32 partial-tile slots:
// effective_split_k() per output tile with split_k, two per CTA of the stream_k grid (kernel.cc
// says how they are laid out). All 0 for data_parallel.
struct SplitWorkspace {
  std::int64_t tiles = 0;           // output tiles
  std::int64_t counter_bytes = 0;   // 256-aligned
  std::int64_t slots = 0;           // partial tiles (each cta_tile_m x cta_tile_n f32)
  std::int64_t partial_bytes = 0;
  std::int64_t total() const { return counter_bytes + partial_bytes; }
};
SplitWorkspace split_workspace(const MatmulProblem& p, const MatmulConfig& c, int sm_count);

// What a launch of the config's kernel needs beyond the problem and the device, for the launch
// arithmetic above (kernels/matmul_common/launch_math.h, which computes all of it: an exported
// pack's launcher runs the same C).
mgpu_lm_matmul launch_consts(const MatmulConfig& c);

}  // namespace mgpu::kernels::sm90
