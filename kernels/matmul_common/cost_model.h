// A deterministic analytic estimate of a persistent matmul kernel's time, for dry runs and for
// ranking when no GPU is present; each template describes its config as a PersistentCost.
// Everything it predicts is labelled "model" downstream. Terms: tensor-core time for the
// padded tile work, spread over the SMs with wave quantization; DRAM time for the operand
// tiles a wave of clusters must fetch (the planar-snake band decides how many distinct A and B
// tiles a wave touches; L2 serves the rest); a pipeline factor (too few stages cannot hide
// load latency); per-tile epilogue and launch overheads. Contract: the estimate is never below
// the roofline floor max(flops / peak, min_bytes / bandwidth) and never grows when only
// stages are added.
#pragma once

#include "core/arch.h"
#include "kernels/matmul_common/config_params.h"
#include "kernels/matmul_problem.h"

namespace mgpu::kernels {

struct Prediction {
  double ms = 0;
  double compute_ms = 0, memory_ms = 0, overhead_ms = 0;
  double roofline_ms = 0;  // the floor no config can beat
};

struct PersistentCost {
  int cta_tile_m = 128, cta_tile_n = 128;  // output tile of one CTA
  int cluster_m = 1, cluster_n = 1;        // CTAs per cluster along M and N
  int tile_k = 64;
  int max_concurrent_steps = 4;
  Dim grid_minor_dim = Dim::N;
  int grid_tile_width = 1;
  double epilogue_pieces = 1;     // SMEM round trips per CTA tile
  double epilogue_hidden = 0;     // fraction of the epilogue overlapped with MMAs (0..1)
  double mma_efficiency = 1;      // how well the operand feed keeps the tensor cores busy (0..1]
};

Prediction predict_persistent(const MatmulProblem& p, const PersistentCost& c, const core::DeviceSpec& device);

}  // namespace mgpu::kernels
