#include "kernels/matmul_sm100/validity.h"

#include <fmt/format.h>

#include "kernels/matmul_common/shape_rules.h"

namespace mgpu::kernels::sm100 {

void check_problem(const MatmulProblem& p) { check_tma_problem(p); }

std::optional<Rejection> why_invalid(const MatmulProblem& p, const MatmulConfig& c, const core::ArchSpec& arch) {
  auto reject = [](const char* rule, std::string reason) { return Rejection{rule, std::move(reason)}; };
  const int out = size_in_bytes(p.out_dtype);

  if (c.tile_m != 128)
    return reject("shape", fmt::format("tile_m {} is not 128: each CTA's tcgen05.mma covers 128 rows, one TMEM lane "
                                       "each", c.tile_m));
  if (c.tile_n < 16 || c.tile_n > 256 || c.tile_n % 16 != 0)
    return reject("shape", fmt::format("tile_n {} is not a multiple of 16 in [16, 256] (tcgen05.mma N)", c.tile_n));
  if (auto r = operand_shape_rule(p, {c.tile_n, c.tile_k, c.max_concurrent_steps, c.grid_tile_width})) return r;

  if (c.collective != 0 && c.collective != 1)
    return reject("collective", fmt::format("collective must be 0 or 1, got {}", c.collective));
  if (c.collective && c.tile_n > 128)
    return reject("collective", fmt::format("collective tile_n {} makes the pair's MMA N {} > 256 (tile_n <= 128 "
                                            "when collective)", c.tile_n, c.mma_n()));

  const int en = c.epilogue_tile_n;
  if (en < 8 || en > 128 || (en & (en - 1)) != 0)
    return reject("epilogue", fmt::format("epilogue_tile_n {} is not a power of two in [8, 128] (one tcgen05.ld "
                                          "32x32b.x{})", en, en));
  if (c.mma_n() % en != 0)
    return reject("epilogue", fmt::format("epilogue_tile_n {} does not divide the CTA's {} output columns", en,
                                          c.mma_n()));
  if (en * out < 32)
    return reject("epilogue", fmt::format("an epilogue row of {} x {} is {} bytes; swizzled SMEM rows need 32", en,
                                          to_string(p.out_dtype), en * out));

  if (c.tmem_columns() > kTmemColumns)
    return reject("tmem", fmt::format("a double-buffered {}-column accumulator needs {} TMEM columns, there are {}",
                                      c.mma_n(), c.tmem_columns(), kTmemColumns));

  std::int64_t smem = smem_plan(p, c).total_bytes();
  if (smem > arch.smem_per_block_optin)
    return reject("smem", fmt::format("needs {} bytes of SMEM, {} has {}", smem, arch.name, arch.smem_per_block_optin));
  return std::nullopt;
}

}  // namespace mgpu::kernels::sm100
