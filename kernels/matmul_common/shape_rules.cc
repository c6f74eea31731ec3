#include "kernels/matmul_common/shape_rules.h"

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels {

void check_tma_problem(const MatmulProblem& p) {
  validate(p);
  auto need = [](std::int64_t elems, DType t, const char* what, const char* flag) {
    std::int64_t bytes = elems * size_in_bytes(t);
    if (bytes % 16 != 0)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{} rows are {} bytes, not a multiple of 16 as TMA requires: make --{} a "
                                    "multiple of {} for {}", what, bytes, flag, 16 / size_in_bytes(t), to_string(t)));
  };
  need(p.k, p.in_dtype, "A (M x K)", "k");
  if (p.b_layout == BLayout::NK) need(p.k, p.in_dtype, "B (N x K)", "k");
  else need(p.n, p.in_dtype, "B (K x N)", "n");
  need(p.n, p.out_dtype, "C (M x N)", "n");
}

std::optional<Rejection> operand_shape_rule(const MatmulProblem& p, const OperandTiles& t) {
  auto reject = [](std::string reason) { return Rejection{"shape", std::move(reason)}; };
  const int in = size_in_bytes(p.in_dtype);
  const int atom_elems = 128 / in;  // a 128-byte swizzle atom along the contiguous dimension
  if (p.b_layout == BLayout::KN && t.tile_n % atom_elems != 0)
    return reject(fmt::format("tile_n {} is not a multiple of {}: an N-major B tile is made of 128-byte swizzle atoms",
                              t.tile_n, atom_elems));
  const int k_bytes = t.tile_k * in;
  // A K row of up to 128 bytes is one swizzle atom, so it must be a swizzle width (32, 64 or
  // 128 bytes); a 96-byte row (tile_k 48 at 16 bits) got a 96-byte "swizzle" and computed
  // garbage (found by verifying --config values outside the default space).
  const bool whole_atoms = k_bytes <= 128 ? (k_bytes == 32 || k_bytes == 64 || k_bytes == 128) : k_bytes % 128 == 0;
  if (t.tile_k % 16 != 0 || !whole_atoms)
    return reject(fmt::format("tile_k {} does not make whole swizzle atoms of K (32, 64, 128 bytes or a multiple "
                              "of 128)", t.tile_k));
  if (t.max_concurrent_steps < 2 || t.max_concurrent_steps > 8)
    return reject(fmt::format("max_concurrent_steps {} is outside [2, 8]", t.max_concurrent_steps));
  if (t.grid_tile_width < 1) return reject("grid_tile_width must be at least 1");
  return std::nullopt;
}

}  // namespace mgpu::kernels
