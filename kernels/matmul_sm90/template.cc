#include "kernels/matmul_sm90/template.h"

#include "kernels/matmul_common/typed_template.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/cost_model.h"
#include "kernels/matmul_sm90/kernel.h"
#include "kernels/matmul_sm90/validity.h"

namespace mgpu::kernels::sm90 {
namespace {

struct Ops {
  using Config = MatmulConfig;
  static constexpr std::string_view name = "matmul_sm90", arch = "sm_90a";
  static std::string_view source_hash() { return MGPU_MATMUL_SM90_SOURCE_HASH; }
  static core::ParamSpace space() { return default_space(); }
  static void check_problem(const MatmulProblem& p) { sm90::check_problem(p); }
  static std::optional<Rejection> why_invalid(const MatmulProblem& p, const Config& c, const core::ArchSpec& a) {
    return sm90::why_invalid(p, c, a);
  }
  static core::BuiltKernel build(const MatmulProblem& p, const Config& c, const core::ArchSpec& a) {
    return build_matmul(p, c, a);
  }
  static mgpu_lm_matmul launch_consts(const Config& c) { return sm90::launch_consts(c); }
  static TileWalkShape walk_shape(const MatmulProblem& p, const Config& c) { return sm90::walk_shape(p, c); }
  // A cluster walks tiles two CTA tiles long along its dimension.
  static std::array<int, 3> grid_unit(const Config& c) {
    return {c.cta_tile_m() * (c.cluster_dimension == ClusterDim::M ? 2 : 1),
            c.cta_tile_n() * (c.cluster_dimension == ClusterDim::N ? 2 : 1), c.tile_k};
  }
  static KernelShape kernel_shape(const Config& c) {
    return {c.cta_tile_m(), c.cta_tile_n(), c.cluster_dimension == ClusterDim::M ? 2 : 1,
            c.cluster_dimension == ClusterDim::N ? 2 : 1, c.tile_k, c.max_concurrent_steps,
            c.schedule == Schedule::SplitK ? c.split_k : 1, c.schedule == Schedule::StreamK};
  }
  static Prediction predict(const MatmulProblem& p, const Config& c, const core::DeviceSpec& d,
                            const KernelDefects& defects) {
    return sm90::predict(p, c, d, defects);
  }
};

}  // namespace

const MatmulTemplate& hopper_matmul() {
  static const TypedMatmulTemplate<Ops> t;
  return t;
}

}  // namespace mgpu::kernels::sm90
