#include "kernels/matmul_sm100/config.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ir/barrier.h"

namespace mgpu::kernels::sm100 {

using core::ParamValue;

int MatmulConfig::tmem_alloc_columns() const {
  int cols = 32;
  while (cols < tmem_columns()) cols *= 2;
  return cols;
}

core::TuningConfig MatmulConfig::to_tuning_config() const {
  core::TuningConfig c;
  c.set("tile_m", tile_m);
  c.set("tile_n", tile_n);
  c.set("tile_k", tile_k);
  c.set("max_concurrent_steps", max_concurrent_steps);
  c.set("collective", collective);
  c.set("epilogue_tile_n", epilogue_tile_n);
  c.set("grid_minor_dim", std::string(to_string(grid_minor_dim)));
  c.set("grid_tile_width", grid_tile_width);
  return c;
}

MatmulConfig MatmulConfig::from_tuning_config(const core::TuningConfig& t) {
  check_param_names(t, {"tile_m", "tile_n", "tile_k", "max_concurrent_steps", "collective", "epilogue_tile_n",
                        "grid_minor_dim", "grid_tile_width"});
  MatmulConfig c;
  for (const auto& [name, v] : t.values()) set_param(c, name, v);
  return c;
}

void MatmulConfig::set_param(MatmulConfig& c, std::string_view name, const ParamValue& v) {
  if (name == "tile_m") c.tile_m = int_value(name, v);
  else if (name == "tile_n") c.tile_n = int_value(name, v);
  else if (name == "tile_k") c.tile_k = int_value(name, v);
  else if (name == "max_concurrent_steps") c.max_concurrent_steps = int_value(name, v);
  else if (name == "collective") c.collective = int_value(name, v);
  else if (name == "epilogue_tile_n") c.epilogue_tile_n = int_value(name, v);
  else if (name == "grid_minor_dim") c.grid_minor_dim = dim_value(name, v);
  else if (name == "grid_tile_width") c.grid_tile_width = int_value(name, v);
  else throw core::Error(core::ErrorKind::InvalidInput, fmt::format("unknown matmul config parameter '{}'", name));
}

core::ParamSpace default_space() {
  auto ints = [](std::initializer_list<std::int64_t> v) { return std::vector<ParamValue>(v.begin(), v.end()); };
  return core::ParamSpace({
      {"tile_m", ints({128}), "rows of A per CTA (tcgen05.mma: one TMEM lane per row)"},
      {"tile_n", ints({64, 128, 192, 256}), "rows of B per CTA; the MMA's N (doubled when collective)"},
      {"tile_k", ints({32, 64, 128}), "K per pipeline step"},
      {"max_concurrent_steps", ints({2, 3, 4, 5, 6}), "SMEM pipeline depth (stages in flight)"},
      {"collective", ints({0, 1}), "1: 2-CTA cluster, one cta_group::2 MMA over both CTAs' operands"},
      {"epilogue_tile_n", ints({32, 64, 128}), "columns per TMEM -> SMEM -> TMA store piece"},
      {"grid_minor_dim", {ParamValue(std::string("M")), ParamValue(std::string("N"))},
       "dimension that varies fastest in the tile order"},
      {"grid_tile_width", ints({1, 2, 4, 8, 16}), "width of a planar-snake band, in cluster tiles"},
  });
}

std::int64_t a_stage_bytes(const MatmulProblem& p, const MatmulConfig& c) {
  return std::int64_t(c.tile_m) * c.tile_k * size_in_bytes(p.in_dtype);
}

std::int64_t b_stage_bytes(const MatmulProblem& p, const MatmulConfig& c) {
  return std::int64_t(c.tile_n) * c.tile_k * size_in_bytes(p.in_dtype);
}

int epilogue_atom_bytes(const MatmulProblem& p, const MatmulConfig& c) {
  return std::min(128, c.epilogue_tile_n * size_in_bytes(p.out_dtype));
}

core::ir::SmemPlan smem_plan(const MatmulProblem& p, const MatmulConfig& c) {
  core::ir::SmemPlan plan;
  // Operand stages and the swizzled epilogue pieces are 1024-aligned, as swizzled TMA needs.
  plan.alloc("a", a_stage_bytes(p, c) * c.max_concurrent_steps, 1024);
  plan.alloc("b", b_stage_bytes(p, c) * c.max_concurrent_steps, 1024);
  plan.alloc("epilogue", 2LL * c.tile_m * c.epilogue_tile_n * size_in_bytes(p.out_dtype), 1024);
  plan.alloc("full", core::ir::BarrierRing::bytes(c.max_concurrent_steps), 8);
  plan.alloc("empty", core::ir::BarrierRing::bytes(c.max_concurrent_steps), 8);
  plan.alloc("acc_full", core::ir::BarrierRing::bytes(2), 8);
  plan.alloc("acc_empty", core::ir::BarrierRing::bytes(2), 8);
  plan.alloc("tmem_slot", 4, 8);
  return plan;
}

}  // namespace mgpu::kernels::sm100
