#include "kernels/matmul_sm90/config.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::kernels::sm90 {

using core::Error;
using core::ErrorKind;
using core::ParamValue;

std::string_view to_string(ClusterDim d) {
  return d == ClusterDim::None ? "none" : d == ClusterDim::M ? "M" : "N";
}

std::string_view to_string(Schedule s) {
  return s == Schedule::SplitK ? "split_k" : s == Schedule::StreamK ? "stream_k" : "data_parallel";
}

std::string_view to_string(Consumers c) { return c == Consumers::PingPong ? "pingpong" : "cooperative"; }

core::TuningConfig MatmulConfig::to_tuning_config() const {
  core::TuningConfig c;
  c.set("tile_m", tile_m);
  c.set("tile_n", tile_n);
  c.set("tile_k", tile_k);
  c.set("max_concurrent_steps", max_concurrent_steps);
  c.set("epi_tile_m", epi_tile_m);
  c.set("epi_tile_n", epi_tile_n);
  c.set("grid_minor_dim", std::string(to_string(grid_minor_dim)));
  c.set("grid_tile_width", grid_tile_width);
  c.set("wg_dimension", std::string(to_string(wg_dimension)));
  c.set("cluster_dimension", std::string(to_string(cluster_dimension)));
  c.set("swap_ab", std::string(swap_ab ? "yes" : "no"));
  c.set("schedule", std::string(to_string(schedule)));
  c.set("split_k", split_k);
  c.set("consumers", std::string(to_string(consumers)));
  return c;
}

MatmulConfig MatmulConfig::from_tuning_config(const core::TuningConfig& t) {
  check_param_names(t, {"tile_m", "tile_n", "tile_k", "max_concurrent_steps", "epi_tile_m", "epi_tile_n",
                        "grid_minor_dim", "grid_tile_width", "wg_dimension", "cluster_dimension"},
                    // Configs stored before 2026-11-26 ran unswapped, before 2026-11-27 data-parallel,
                    // before 2026-11-28 with cooperating consumers: absent, they keep the defaults.
                    {"swap_ab", "schedule", "split_k", "consumers"});
  MatmulConfig c;
  for (const auto& [name, v] : t.values()) set_param(c, name, v);
  return c;
}

void MatmulConfig::set_param(MatmulConfig& c, std::string_view name, const ParamValue& v) {
  if (name == "tile_m") c.tile_m = int_value(name, v);
  else if (name == "tile_n") c.tile_n = int_value(name, v);
  else if (name == "tile_k") c.tile_k = int_value(name, v);
  else if (name == "max_concurrent_steps") c.max_concurrent_steps = int_value(name, v);
  else if (name == "epi_tile_m") c.epi_tile_m = int_value(name, v);
  else if (name == "epi_tile_n") c.epi_tile_n = int_value(name, v);
  else if (name == "grid_minor_dim") c.grid_minor_dim = dim_value(name, v);
  else if (name == "grid_tile_width") c.grid_tile_width = int_value(name, v);
  else if (name == "wg_dimension") c.wg_dimension = dim_value(name, v);
  else if (name == "split_k") c.split_k = int_value(name, v);
  else if (name == "cluster_dimension") {
    const std::string& cl = str_value(name, v);
    if (cl == "none") c.cluster_dimension = ClusterDim::None;
    else if (cl == "M") c.cluster_dimension = ClusterDim::M;
    else if (cl == "N") c.cluster_dimension = ClusterDim::N;
    else throw Error(ErrorKind::InvalidInput, fmt::format("cluster_dimension must be \"none\", \"M\" or \"N\", got \"{}\"", cl));
  } else if (name == "swap_ab") {
    const std::string& sw = str_value(name, v);
    if (sw != "no" && sw != "yes")
      throw Error(ErrorKind::InvalidInput, fmt::format("swap_ab must be \"no\" or \"yes\", got \"{}\"", sw));
    c.swap_ab = sw == "yes";
  } else if (name == "schedule") {
    const std::string& sc = str_value(name, v);
    if (sc == "data_parallel") c.schedule = Schedule::DataParallel;
    else if (sc == "split_k") c.schedule = Schedule::SplitK;
    else if (sc == "stream_k") c.schedule = Schedule::StreamK;
    else
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("schedule must be \"data_parallel\", \"split_k\" or \"stream_k\", got \"{}\"", sc));
  } else if (name == "consumers") {
    const std::string& co = str_value(name, v);
    if (co == "cooperative") c.consumers = Consumers::Cooperative;
    else if (co == "pingpong") c.consumers = Consumers::PingPong;
    else throw Error(ErrorKind::InvalidInput, fmt::format("consumers must be \"cooperative\" or \"pingpong\", got \"{}\"", co));
  } else {
    throw Error(ErrorKind::InvalidInput, fmt::format("unknown matmul config parameter '{}'", name));
  }
}

core::ParamSpace default_space() {
  auto ints = [](std::initializer_list<std::int64_t> v) { return std::vector<ParamValue>(v.begin(), v.end()); };
  auto strs = [](std::initializer_list<const char*> v) {
    std::vector<ParamValue> out;
    for (const char* s : v) out.emplace_back(std::string(s));
    return out;
  };
  return core::ParamSpace({
      {"tile_m", ints({8, 16, 32, 64, 128, 192, 256}),
       "rows of C per compute warpgroup (a multiple of wgmma's 64; with swap_ab 8..64, wgmma's N)"},
      {"tile_n", ints({64, 128, 192, 256}), "columns of C per compute warpgroup (wgmma N)"},
      {"tile_k", ints({32, 64, 128}), "K per pipeline step"},
      {"max_concurrent_steps", ints({2, 3, 4, 5, 6}), "SMEM pipeline depth (stages in flight)"},
      {"epi_tile_m", ints({64}), "rows of an epilogue piece stored through SMEM"},
      {"epi_tile_n", ints({32, 64, 128}), "columns of an epilogue piece"},
      {"grid_minor_dim", strs({"M", "N"}), "dimension that varies fastest in the tile order"},
      {"grid_tile_width", ints({1, 2, 4, 8, 16}), "width of a planar-snake band, in tiles"},
      {"wg_dimension", strs({"M", "N"}), "dimension the two compute warpgroups split"},
      {"cluster_dimension", strs({"none", "M", "N"}), "2-CTA cluster along M or N sharing (multicasting) an operand"},
      {"swap_ab", strs({"no", "yes"}), "compute C^T = B^T A^T, so that a small M is wgmma's N (decode)"},
      {"schedule", strs({"data_parallel", "split_k", "stream_k"}),
       "data_parallel: a CTA runs a tile's whole K loop; split_k: split_k CTAs share it (K-heavy, few tiles); "
       "stream_k: every SM takes an equal share of all tiles' k-steps (tile counts that leave a wave part-empty)"},
      {"split_k", ints({1, 2, 3, 4, 6, 8}),
       "K ranges per output tile (split_k only; 1 otherwise; run-time: no recompile)"},
      {"consumers", strs({"cooperative", "pingpong"}),
       "cooperative: the two compute warpgroups split every tile along wg_dimension; pingpong: they take "
       "alternate tiles, one's MMAs running while the other's epilogue stores"},
  });
}

std::int64_t a_stage_bytes(const MatmulProblem& p, const MatmulConfig& c) {
  return std::int64_t(c.cta_tile_m()) * c.tile_k * size_in_bytes(p.in_dtype);
}

std::int64_t b_stage_bytes(const MatmulProblem& p, const MatmulConfig& c) {
  return std::int64_t(c.cta_tile_n()) * c.tile_k * size_in_bytes(p.in_dtype);
}

core::ir::SmemPlan smem_plan(const MatmulProblem& p, const MatmulConfig& c) {
  core::ir::SmemPlan plan;
  // Operand stages first, each 1024-aligned: swizzled TMA tiles need it.
  plan.alloc("a", a_stage_bytes(p, c) * c.max_concurrent_steps, 1024);
  plan.alloc("b", b_stage_bytes(p, c) * c.max_concurrent_steps, 1024);
  // 1024-aligned: a staging atom is epi_rows() (a multiple of 8) rows of W bytes, so every
  // atom starts on an 8 W-byte boundary, where a W-byte swizzle pattern starts (1024 for 128B).
  plan.alloc("epilogue", 2LL * c.epi_rows() * c.epi_tile_n * size_in_bytes(p.out_dtype), 1024);
  plan.alloc("full", core::ir::BarrierRingBytes(c.max_concurrent_steps), 8);
  plan.alloc("empty", core::ir::BarrierRingBytes(c.max_concurrent_steps), 8);
  if (c.reduces()) plan.alloc("ticket", 8, 8);
  return plan;
}

int epilogue_atom_bytes(const MatmulProblem& p, const MatmulConfig& c) {
  const int row = c.epi_tile_n * size_in_bytes(p.out_dtype);
  for (int w : {128, 64, 32})
    if (row % w == 0) return w;
  return 16;
}

mgpu_lm_matmul launch_consts(const MatmulConfig& c) {
  mgpu_lm_matmul l{};
  l.cta_tile_m = c.cta_tile_m();
  l.cta_tile_n = c.cta_tile_n();
  l.cluster_m = c.cluster_dimension == ClusterDim::M ? 2 : 1;
  l.cluster_n = c.cluster_dimension == ClusterDim::N ? 2 : 1;
  l.tile_k = c.tile_k;
  l.schedule = c.schedule == Schedule::SplitK    ? MGPU_LM_SPLIT_K
               : c.schedule == Schedule::StreamK ? MGPU_LM_STREAM_K
                                                 : MGPU_LM_DATA_PARALLEL;
  l.split_k = c.split_k;
  l.minor_is_n = c.grid_minor_dim == Dim::N ? 1 : 0;
  l.grid_tile_width = c.grid_tile_width;
  l.counters_per_tile = 2;  // one per consumer warpgroup
  l.max_workspace_bytes = kMaxWorkspaceBytes;
  return l;
}

int effective_split_k(const MatmulProblem& p, const MatmulConfig& c) {
  const mgpu_lm_matmul l = launch_consts(c);
  return mgpu_lm_effective_split_k(&l, p.m, p.n, p.k);
}

unsigned stream_k_grid(const MatmulProblem& p, const MatmulConfig& c, int sm_count) {
  const mgpu_lm_matmul l = launch_consts(c);
  return mgpu_lm_stream_k_grid(&l, p.m, p.n, p.k, sm_count);
}

SplitWorkspace split_workspace(const MatmulProblem& p, const MatmulConfig& c, int sm_count) {
  const mgpu_lm_matmul l = launch_consts(c);
  const mgpu_lm_workspace w = mgpu_lm_workspace_of(&l, p.m, p.n, p.k, sm_count);
  return {w.tiles, w.counter_bytes, w.slots, w.partial_bytes};
}

}  // namespace mgpu::kernels::sm90
