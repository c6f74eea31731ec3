// The matmul cases the GPU test runs (shapes x configs): both B layouts, both cluster
// dimensions, ragged shapes. The CPU tests check that each is valid and compiles, so a GPU
// session never finds a broken case list.
#pragma once

#include <ostream>
#include <vector>

#include "kernels/matmul_problem.h"

namespace mgpu::testing {

struct MatmulCase {
  kernels::MatmulProblem problem;
  const char* config;
};

// gtest prints parameters with this: the problem and the config, readable in test output.
inline void PrintTo(const MatmulCase& c, std::ostream* os) { *os << c.problem.key() << " " << c.config; }

inline constexpr const char* kBase =
    R"({"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"N","grid_tile_width":8,)"
    R"("max_concurrent_steps":4,"tile_k":64,"tile_m":128,"tile_n":128,"wg_dimension":"M"})";
inline constexpr const char* kClusterM =
    R"({"cluster_dimension":"M","epi_tile_m":64,"epi_tile_n":32,"grid_minor_dim":"M","grid_tile_width":2,)"
    R"("max_concurrent_steps":3,"tile_k":64,"tile_m":64,"tile_n":256,"wg_dimension":"M"})";
inline constexpr const char* kClusterN =
    R"({"cluster_dimension":"N","epi_tile_m":64,"epi_tile_n":128,"grid_minor_dim":"N","grid_tile_width":1,)"
    R"("max_concurrent_steps":5,"tile_k":32,"tile_m":128,"tile_n":128,"wg_dimension":"N"})";

// 2 x 192 rows of A per stage, multicast in halves of 192: more rows than one TMA box (256)
// holds -- the virtual device found these loaded as two 256-row boxes overrunning the stage.
inline constexpr const char* kTallStage =
    R"({"cluster_dimension":"M","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"N","grid_tile_width":2,)"
    R"("max_concurrent_steps":2,"tile_k":64,"tile_m":192,"tile_n":64,"wg_dimension":"M"})";

// Cluster along M with B as N x K: each CTA loads and multicasts half of the CTA's B rows, and
// those halves start off their swizzle pattern's boundary -- 12 rows of 64 bytes (768 bytes into
// a 512-byte pattern) and 20 rows of 32 bytes (640 bytes, 256-byte pattern). A validity rule
// rejected these until 2026-11-23; the swizzle is a function of the absolute shared address
// (PTX ISA 9.7.15.5.1.2.2), so they must compute the same answer as any other config.
inline constexpr const char* kHalvesOffPattern64 =
    R"({"cluster_dimension":"M","epi_tile_m":64,"epi_tile_n":8,"grid_minor_dim":"N","grid_tile_width":2,)"
    R"("max_concurrent_steps":4,"tile_k":32,"tile_m":128,"tile_n":24,"wg_dimension":"M"})";
inline constexpr const char* kHalvesOffPattern32 =
    R"({"cluster_dimension":"M","epi_tile_m":64,"epi_tile_n":40,"grid_minor_dim":"M","grid_tile_width":1,)"
    R"("max_concurrent_steps":3,"tile_k":16,"tile_m":64,"tile_n":40,"wg_dimension":"M"})";

// swap_ab: C^T = B^T A^T, M as wgmma's N; decode-sized M, both B layouts (K x N B is wgmma's
// MN-major "transposed" A operand), a pair along N multicasting A's few rows, f32 output with
// half-block epilogue pieces (epi_tile_n 32).
inline constexpr const char* kSwapDecode =
    R"({"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"N","grid_tile_width":8,)"
    R"("max_concurrent_steps":6,"swap_ab":"yes","tile_k":64,"tile_m":16,"tile_n":64,"wg_dimension":"N"})";
inline constexpr const char* kSwapPair =
    R"({"cluster_dimension":"N","epi_tile_m":64,"epi_tile_n":128,"grid_minor_dim":"M","grid_tile_width":2,)"
    R"("max_concurrent_steps":4,"swap_ab":"yes","tile_k":32,"tile_m":8,"tile_n":128,"wg_dimension":"M"})";
inline constexpr const char* kSwapHalfPieces =
    R"({"cluster_dimension":"M","epi_tile_m":64,"epi_tile_n":32,"grid_minor_dim":"N","grid_tile_width":1,)"
    R"("max_concurrent_steps":3,"swap_ab":"yes","tile_k":128,"tile_m":32,"tile_n":128,"wg_dimension":"N"})";

// split_k: K ranges of one tile on different CTAs, summed by the last to finish through an f32
// workspace -- decode-sized and swapped, with uneven ranges (K 1000 is 16 steps of 64 less a
// tail: 5, 5, 6 for three ranges) and several units per CTA; unswapped with eight ranges.
inline constexpr const char* kSplitDecode =
    R"({"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"N","grid_tile_width":8,)"
    R"("max_concurrent_steps":3,"schedule":"split_k","split_k":3,"swap_ab":"yes","tile_k":64,"tile_m":16,)"
    R"("tile_n":64,"wg_dimension":"N"})";
inline constexpr const char* kSplitEight =
    R"({"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":32,"grid_minor_dim":"M","grid_tile_width":2,)"
    R"("max_concurrent_steps":4,"schedule":"split_k","split_k":8,"swap_ab":"no","tile_k":32,"tile_m":64,)"
    R"("tile_n":128,"wg_dimension":"M"})";

// stream_k: every CTA an equal share of all tiles' k-steps, so tiles are cut between CTAs at
// arbitrary k-steps and summed through the workspace -- decode-sized and swapped (112 k-steps
// of 7 tiles on up to 132 CTAs: a tile shared by many), and unswapped at a ragged shape where
// a CTA's share spans whole tiles and the pieces of two others (576 k-steps on 132 SMs).
inline constexpr const char* kStreamDecode =
    R"({"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"N","grid_tile_width":8,)"
    R"("max_concurrent_steps":3,"schedule":"stream_k","split_k":1,"swap_ab":"yes","tile_k":64,"tile_m":16,)"
    R"("tile_n":64,"wg_dimension":"N"})";
inline constexpr const char* kStreamRagged =
    R"({"cluster_dimension":"none","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"M","grid_tile_width":2,)"
    R"("max_concurrent_steps":4,"schedule":"stream_k","split_k":1,"swap_ab":"no","tile_k":32,"tile_m":64,)"
    R"("tile_n":128,"wg_dimension":"M"})";

// pingpong: the two compute warpgroups take alternate tiles, handing each other the MMA turn
// through named barriers -- CTAs with three tiles (so each warpgroup waits for a turn and the
// ring's parities are skipped across the other's tiles), swapped at decode size, and a 2-CTA
// cluster along M multicasting B with K x N layout.
inline constexpr const char* kPingPong =
    R"({"cluster_dimension":"none","consumers":"pingpong","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"N",)"
    R"("grid_tile_width":4,"max_concurrent_steps":3,"tile_k":64,"tile_m":64,"tile_n":64,"wg_dimension":"M"})";
inline constexpr const char* kPingPongSwap =
    R"({"cluster_dimension":"none","consumers":"pingpong","epi_tile_m":64,"epi_tile_n":64,"grid_minor_dim":"M",)"
    R"("grid_tile_width":2,"max_concurrent_steps":4,"swap_ab":"yes","tile_k":64,"tile_m":8,"tile_n":64,)"
    R"("wg_dimension":"M"})";
inline constexpr const char* kPingPongCluster =
    R"({"cluster_dimension":"M","consumers":"pingpong","epi_tile_m":64,"epi_tile_n":32,"grid_minor_dim":"N",)"
    R"("grid_tile_width":8,"max_concurrent_steps":4,"tile_k":32,"tile_m":64,"tile_n":128,"wg_dimension":"M"})";

inline std::vector<MatmulCase> gpu_matmul_cases() {
  using kernels::BLayout;
  return {MatmulCase{{.m = 512, .n = 512, .k = 512}, kBase},
          MatmulCase{{.m = 512, .n = 512, .k = 512, .b_layout = BLayout::NK}, kBase},
          MatmulCase{{.m = 1000, .n = 776, .k = 264}, kBase},  // ragged in every dimension
          MatmulCase{{.m = 1000, .n = 776, .k = 264, .b_layout = BLayout::NK}, kBase},
          MatmulCase{{.m = 768, .n = 1024, .k = 512}, kClusterM},
          MatmulCase{{.m = 777, .n = 1000, .k = 200, .b_layout = BLayout::NK}, kClusterM},
          MatmulCase{{.m = 1024, .n = 768, .k = 512}, kClusterN},
          MatmulCase{{.m = 1, .n = 8, .k = 8}, kBase},  // smaller than one tile
          MatmulCase{{.m = 768, .n = 256, .k = 256}, kTallStage},
          MatmulCase{{.m = 520, .n = 392, .k = 264, .b_layout = BLayout::NK}, kHalvesOffPattern64},
          MatmulCase{{.m = 300, .n = 200, .k = 136, .b_layout = BLayout::NK}, kHalvesOffPattern32},
          MatmulCase{{.m = 16, .n = 776, .k = 264, .b_layout = BLayout::NK}, kSwapDecode},
          MatmulCase{{.m = 1, .n = 512, .k = 256}, kSwapDecode},
          MatmulCase{{.m = 40, .n = 1000, .k = 200}, kSwapPair},
          MatmulCase{{.m = 100, .n = 520, .k = 264, .out_dtype = kernels::DType::F32, .b_layout = BLayout::NK},
                     kSwapHalfPieces},
          MatmulCase{{.m = 1, .n = 1000, .k = 1000, .b_layout = BLayout::NK}, kSplitDecode},
          MatmulCase{{.m = 40, .n = 776, .k = 1000}, kSplitDecode},
          MatmulCase{{.m = 200, .n = 264, .k = 520, .out_dtype = kernels::DType::F32}, kSplitEight},
          MatmulCase{{.m = 16, .n = 776, .k = 1000, .b_layout = BLayout::NK}, kStreamDecode},
          MatmulCase{{.m = 1000, .n = 1000, .k = 264}, kStreamRagged},
          MatmulCase{{.m = 1000, .n = 1112, .k = 264}, kPingPong},  // 288 tiles: up to 3 per CTA
          MatmulCase{{.m = 1000, .n = 1112, .k = 264, .out_dtype = kernels::DType::F32, .b_layout = BLayout::NK},
                     kPingPong},
          MatmulCase{{.m = 40, .n = 4096, .k = 200, .b_layout = BLayout::NK}, kPingPongSwap},
          MatmulCase{{.m = 1536, .n = 2048, .k = 128}, kPingPongCluster}};
}

}  // namespace mgpu::testing
