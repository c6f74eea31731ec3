#include "kernels/matmul_sm100/template.h"

#include <set>

#include "kernels/matmul_sm100/config.h"
#include "kernels/matmul_sm100/cost_model.h"
#include "kernels/matmul_sm100/kernel.h"
#include "kernels/matmul_sm100/validity.h"

namespace mgpu::kernels::sm100 {
namespace {

class BlackwellMatmul final : public MatmulTemplate {
 public:
  std::string_view name() const override { return "matmul_sm100"; }
  std::string_view source_hash() const override { return MGPU_MATMUL_SM100_SOURCE_HASH; }
  const core::ArchSpec& arch() const override { return core::parse_arch("sm_100a"); }
  core::ParamSpace space() const override { return default_space(); }
  core::TuningConfig default_config() const override { return MatmulConfig{}.to_tuning_config(); }
  std::vector<std::string> run_time_params() const override { return {"grid_minor_dim", "grid_tile_width"}; }
  void check_problem(const MatmulProblem& p) const override { sm100::check_problem(p); }
  void check_config(const core::TuningConfig& c) const override { MatmulConfig::from_tuning_config(c); }
  std::optional<Rejection> why_invalid(const MatmulProblem& p, const core::TuningConfig& c) const override {
    return sm100::why_invalid(p, MatmulConfig::from_tuning_config(c), arch());
  }
  core::BuiltKernel build(const MatmulProblem& p, const core::TuningConfig& c) const override {
    return build_matmul(p, MatmulConfig::from_tuning_config(c), arch());
  }
  unsigned grid(const MatmulProblem& p, const core::TuningConfig& c, int sm_count) const override {
    return persistent_grid(p, MatmulConfig::from_tuning_config(c), sm_count);
  }
  std::vector<std::int32_t> scalar_args(const MatmulProblem& p, const core::TuningConfig& t) const override {
    MatmulConfig c = MatmulConfig::from_tuning_config(t);
    return {static_cast<std::int32_t>(p.m), static_cast<std::int32_t>(p.n), static_cast<std::int32_t>(p.k),
            c.grid_minor_dim == Dim::N ? 1 : 0, c.grid_tile_width};
  }
  std::vector<std::array<int, 3>> grid_units() const override {
    std::set<std::array<int, 3>> units;
    default_space().enumerate([&](const core::TuningConfig& t) {
      MatmulConfig c = MatmulConfig::from_tuning_config(t);
      units.insert({c.tile_m * c.cluster_size(), c.mma_n(), c.tile_k});
    });
    return {units.begin(), units.end()};
  }
  double predict_ms(const MatmulProblem& p, const core::TuningConfig& c, const core::DeviceSpec& d) const override {
    return predict(p, MatmulConfig::from_tuning_config(c), d).ms;
  }
};

}  // namespace

const MatmulTemplate& blackwell_matmul() {
  static const BlackwellMatmul t;
  return t;
}

}  // namespace mgpu::kernels::sm100
