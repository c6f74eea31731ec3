// The Hopper template's config in the terms of the shared persistent-matmul cost model
// (kernels/matmul_common/cost_model.h): CTA tile = the two consumer warpgroups' tiles, the
// epilogue runs on the consumers (not overlapped), wgmma fed straight from SMEM.
#pragma once

#include "core/arch.h"
#include "kernels/matmul_common/cost_model.h"
#include "kernels/matmul_sm90/config.h"

namespace mgpu::kernels::sm90 {

PersistentCost cost_terms(const MatmulConfig& c);
Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& device);

}  // namespace mgpu::kernels::sm90
