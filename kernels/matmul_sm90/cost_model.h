// A deterministic analytic estimate of the Hopper matmul kernel's time, for dry runs and for
// ranking when no GPU is present. Everything it predicts is labelled "model" downstream.
// Terms: tensor-core time for the padded tile work, spread over the SMs with wave
// quantization; DRAM time for the operand tiles a wave of CTAs must fetch (the planar-snake
// band decides how many distinct A and B tiles a wave touches; L2 serves the rest); a
// pipeline factor (too few stages cannot hide load latency); per-tile epilogue and launch
// overheads. Contract: the estimate is never below the roofline floor
// max(flops / peak, min_bytes / bandwidth) and never grows when only stages are added.
#pragma once

#include "core/arch.h"
#include "kernels/matmul_problem.h"
#include "kernels/matmul_sm90/config.h"

namespace mgpu::kernels::sm90 {

struct Prediction {
  double ms = 0;
  double compute_ms = 0, memory_ms = 0, overhead_ms = 0;
  double roofline_ms = 0;  // the floor no config can beat
};

Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& device);

}  // namespace mgpu::kernels::sm90
