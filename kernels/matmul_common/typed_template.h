// The MatmulTemplate face over one template's typed pieces, written once for every matmul
// template: TuningConfigs are parsed into the template's own Config, and the persistent
// kernels' shared contract (grid, scalar arguments and workspace from the config's launch consts
// by launch_math.h; grid order parameters decided at run time) is implemented here. A template
// supplies `Ops`:
//   using Config;                                        // with from/to_tuning_config, set_param
//   static constexpr std::string_view name, arch;        // e.g. "matmul_sm90", "sm_90a"
//   static std::string_view source_hash();
//   static core::ParamSpace space();
//   static void check_problem(const MatmulProblem&);
//   static std::optional<Rejection> why_invalid(const MatmulProblem&, const Config&, const core::ArchSpec&);
//   static core::BuiltKernel build(const MatmulProblem&, const Config&, const core::ArchSpec&);
//   static mgpu_lm_matmul launch_consts(const Config&);  // what launch_math.h computes the launch from
//   static TileWalkShape walk_shape(const MatmulProblem&, const Config&);  // what the kernel's TileWalk walks for p
//   static std::array<int, 3> grid_unit(const Config&);  // (M, N, K) a grid counts in
//   static KernelShape kernel_shape(const Config&);
//   static Prediction predict(const MatmulProblem&, const Config&, const core::DeviceSpec&, const KernelDefects&);
#pragma once

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "kernels/matmul_common/config_params.h"
#include "kernels/matmul_common/tile_walk.h"
#include "kernels/matmul_template.h"

namespace mgpu::kernels {

template <class Ops>
class TypedMatmulTemplate final : public MatmulTemplate {
  using Config = typename Ops::Config;
  static Config parse(const core::TuningConfig& c) { return Config::from_tuning_config(c); }

 public:
  std::string_view name() const override { return Ops::name; }
  std::string_view source_hash() const override { return Ops::source_hash(); }
  const core::ArchSpec& arch() const override { return core::parse_arch(Ops::arch); }
  core::ParamSpace space() const override { return Ops::space(); }
  core::TuningConfig default_config() const override { return Config{}.to_tuning_config(); }
  std::vector<std::string> run_time_params() const override {
    // Asked once per config when configs are grouped by binary: the space is read once.
    static const std::vector<std::string> names = [] {
      std::vector<std::string> n = {"grid_minor_dim", "grid_tile_width"};
      const core::ParamSpace space = Ops::space();  // params() refers into it: keep it alive
      for (const core::Param& d : space.params())
        if (d.name == "split_k") n.push_back("split_k");  // a kernel argument (the split count)
      return n;
    }();
    return names;
  }
  void check_problem(const MatmulProblem& p) const override { Ops::check_problem(p); }
  void check_config(const core::TuningConfig& c) const override { parse(c); }
  std::optional<Rejection> why_invalid(const MatmulProblem& p, const core::TuningConfig& c) const override {
    return Ops::why_invalid(p, parse(c), arch());
  }
  void walk(const MatmulProblem& p, const std::function<void(const core::TuningConfig&, const Rejection*)>& visit,
            const std::atomic<bool>* stop) const override {
    const core::ArchSpec& a = arch();
    walk_typed([&](const core::TuningConfig& t, const Config& c) {
      const std::optional<Rejection> why = Ops::why_invalid(p, c, a);
      visit(t, why ? &*why : nullptr);
    }, stop);
  }
  core::BuiltKernel build(const MatmulProblem& p, const core::TuningConfig& c) const override {
    return Ops::build(p, parse(c), arch());
  }
  mgpu_lm_matmul launch_consts(const core::TuningConfig& c) const override { return Ops::launch_consts(parse(c)); }
  unsigned grid(const MatmulProblem& p, const core::TuningConfig& c, int sm_count) const override {
    const mgpu_lm_matmul l = launch_consts(c);
    return mgpu_lm_grid(&l, p.m, p.n, p.k, sm_count);
  }
  std::vector<std::int32_t> scalar_args(const MatmulProblem& p, const core::TuningConfig& c) const override {
    const mgpu_lm_matmul l = launch_consts(c);
    std::int32_t args[MGPU_LM_MAX_SCALARS];
    const int count = mgpu_lm_scalar_args(&l, p.m, p.n, p.k, args);
    return {args, args + count};
  }
  std::int64_t workspace_bytes(const MatmulProblem& p, const core::TuningConfig& c, int sm_count) const override {
    const mgpu_lm_matmul l = launch_consts(c);
    return mgpu_lm_workspace_bytes(&l, p.m, p.n, p.k, sm_count);
  }
  std::string launch_signature(const MatmulProblem& p, const core::TuningConfig& t, int sm_count) const override {
    // The run-time parameters reach the kernel only through its TileWalk (the tile order, and
    // with split-K the K range of each unit): what the launch does beyond the binary and the
    // problem is each cluster's sequence of work units.
    Config c = parse(t);
    const TileWalkShape s = Ops::walk_shape(p, c);
    const unsigned grid = this->grid(p, t, sm_count), cs = unsigned(s.cluster_size());
    std::vector<std::string> clusters;
    for (unsigned first = 0; first < grid; first += cs) {
      std::string seq;
      for (unsigned r = 0; r < cs; ++r) {
        for (const HostUnit& u : host_tile_walk(s, p.m, p.n, first + r, grid, c.grid_minor_dim == Dim::N, c.grid_tile_width))
          seq += s.stream ? fmt::format("{},{},{}+{};", u.m0, u.n0, u.k_first, u.k_count)
                 : s.splits > 1 ? fmt::format("{},{},{};", u.m0, u.n0, u.split)
                                : fmt::format("{},{};", u.m0, u.n0);
        seq += '|';
      }
      clusters.push_back(std::move(seq));
    }
    std::sort(clusters.begin(), clusters.end());
    std::string out = s.stream ? fmt::format("grid {} cluster {} stream:", grid, cs)
                      : s.splits > 1 ? fmt::format("grid {} cluster {} splits {}:", grid, cs, s.splits)
                                     : fmt::format("grid {} cluster {}:", grid, cs);
    for (const std::string& x : clusters) out += ' ' + x;
    return out;
  }
  std::vector<std::array<int, 3>> grid_units() const override {
    std::set<std::array<int, 3>> units;
    walk_typed([&](const core::TuningConfig&, const Config& c) { units.insert(Ops::grid_unit(c)); });
    return {units.begin(), units.end()};
  }
  KernelShape kernel_shape(const core::TuningConfig& c) const override { return Ops::kernel_shape(parse(c)); }
  double predict_ms(const MatmulProblem& p, const core::TuningConfig& c, const core::DeviceSpec& d) const override {
    return Ops::predict(p, parse(c), d, KernelDefects{}).ms;
  }
  Prediction predict(const MatmulProblem& p, const core::TuningConfig& c, const core::DeviceSpec& d,
                     const KernelDefects& defects) const override {
    return Ops::predict(p, parse(c), d, defects);
  }

 private:
  // The space's configs each with its parsed Config, updated from the first parameter that
  // changed (parse() of every config was 90% of a walk: 7 s of CPU for the Hopper space).
  static void walk_typed(const std::function<void(const core::TuningConfig&, const Config&)>& visit,
                         const std::atomic<bool>* stop = nullptr) {
    const core::ParamSpace space = Ops::space();
    const std::vector<core::Param>& params = space.params();
    Config typed;
    space.enumerate_changes([&](const core::TuningConfig& t, size_t first_changed) {
      for (size_t d = first_changed; d < params.size(); ++d)
        Config::set_param(typed, params[d].name, t.values().find(params[d].name)->second);
      visit(t, typed);
    }, stop);
  }
};

}  // namespace mgpu::kernels
