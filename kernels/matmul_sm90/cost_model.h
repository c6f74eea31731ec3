// The Hopper template's config in the terms of the shared persistent-matmul cost model
// (kernels/matmul_common/cost_model.h): CTA tile = the two consumer warpgroups' tiles, the
// epilogue runs on the consumers (not overlapped), wgmma fed straight from SMEM. For the lint
// penalties: 384 threads (a producer and two consumer warpgroups), each consumer issuing
// tile_m / 64 x tile_k / 16 wgmmas (m64 x tile_n x k16) per k-step and holding a
// tile_m x tile_n f32 accumulator over its 128 threads.
#pragma once

#include "core/arch.h"
#include "kernels/matmul_common/cost_model.h"
#include "kernels/matmul_sm90/config.h"

namespace mgpu::kernels::sm90 {

PersistentCost cost_terms(const MatmulProblem& p, const MatmulConfig& c);
Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& device,
                   const KernelDefects& defects = {});

}  // namespace mgpu::kernels::sm90
