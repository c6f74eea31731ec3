// Which configs of the Blackwell matmul template can work, stated once. Contract:
// check_problem() throws Error{InvalidInput} when the template cannot run a problem at all
// (TMA's 16-byte row strides); why_invalid() returns the first rule a config breaks, with a
// reason, or nullopt when the config is valid. Rules, in order:
//   shape       what tcgen05.mma can express (128 A rows per CTA, N a multiple of 16 up to
//               256) and the operand-tile rules shared with Hopper (kernels/matmul_common)
//   collective  collective is 0 or 1; a pair's MMA N is 2 x tile_n <= 256, so tile_n <= 128
//               (as Pallas:MGPU enforces)
//   epilogue    pieces that tile the CTA's output columns, loadable by one tcgen05.ld
//               (a power of two <= 128 columns) and stored through >= 32-byte swizzled rows
//   tmem        the double-buffered f32 accumulator (2 x MMA N columns) fits TMEM's 512
//   smem        stages x operand tiles + epilogue pieces + barriers <= the arch's opt-in SMEM
#pragma once

#include <optional>

#include "core/arch.h"
#include "kernels/matmul_problem.h"
#include "kernels/matmul_sm100/config.h"
#include "kernels/rejection.h"

namespace mgpu::kernels::sm100 {

inline constexpr int kTmemColumns = 512;

void check_problem(const MatmulProblem& p);
std::optional<Rejection> why_invalid(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch);

}  // namespace mgpu::kernels::sm100
