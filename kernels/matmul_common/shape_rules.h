// Validity rules every TMA-fed matmul template shares. Contract: check_tma_problem() throws
// Error{InvalidInput} when a problem cannot be described to TMA at all (row strides must be
// multiples of 16 bytes), naming the flag to change; operand_shape_rule() returns the first
// broken rule ("shape") about the operand tiles -- K in whole swizzle atoms, N-major B tiles
// in whole 128-byte atoms, pipeline depth, band width -- or nullopt.
#pragma once

#include <optional>

#include "kernels/matmul_problem.h"
#include "kernels/rejection.h"

namespace mgpu::kernels {

void check_tma_problem(const MatmulProblem& p);

struct OperandTiles {
  int tile_n = 0;  // B rows (N) one CTA loads per stage
  int tile_k = 0;
  int max_concurrent_steps = 0;
  int grid_tile_width = 0;
};
std::optional<Rejection> operand_shape_rule(const MatmulProblem& p, const OperandTiles& t);

}  // namespace mgpu::kernels
