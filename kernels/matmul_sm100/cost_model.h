// The Blackwell template's config in the terms of the shared persistent-matmul cost model
// (kernels/matmul_common/cost_model.h). What differs from Hopper: the epilogue overlaps the
// next tile's MMAs (double-buffered TMEM), and the tensor cores' operand feed -- each
// tcgen05.mma reads A and B from SMEM, at most 128 bytes per clock per SM -- limits narrow
// tiles; a collective pair halves the B bytes each SM reads per MMA. For the lint penalties:
// 256 threads, one thread issuing tile_k / 16 MMAs per k-step (each reading the SM's A rows
// and its share of B), accumulators in tensor memory (no register cap to charge).
#pragma once

#include "core/arch.h"
#include "kernels/matmul_common/cost_model.h"
#include "kernels/matmul_sm100/config.h"

namespace mgpu::kernels::sm100 {

// Tensor-core clocks over SMEM-read clocks of one k16 MMA step, capped at 1.
double mma_feed_efficiency(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d);
PersistentCost cost_terms(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d);
Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d,
                   const KernelDefects& defects = {});

}  // namespace mgpu::kernels::sm100
