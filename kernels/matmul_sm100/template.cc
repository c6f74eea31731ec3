#include "kernels/matmul_sm100/template.h"

#include "kernels/matmul_common/typed_template.h"
#include "kernels/matmul_sm100/config.h"
#include "kernels/matmul_sm100/cost_model.h"
#include "kernels/matmul_sm100/kernel.h"
#include "kernels/matmul_sm100/validity.h"

namespace mgpu::kernels::sm100 {
namespace {

struct Ops {
  using Config = MatmulConfig;
  static constexpr std::string_view name = "matmul_sm100", arch = "sm_100a";
  static std::string_view source_hash() { return MGPU_MATMUL_SM100_SOURCE_HASH; }
  static core::ParamSpace space() { return default_space(); }
  static void check_problem(const MatmulProblem& p) { sm100::check_problem(p); }
  static std::optional<Rejection> why_invalid(const MatmulProblem& p, const Config& c, const core::ArchSpec& a) {
    return sm100::why_invalid(p, c, a);
  }
  static core::BuiltKernel build(const MatmulProblem& p, const Config& c, const core::ArchSpec& a) {
    return build_matmul(p, c, a);
  }
  static mgpu_lm_matmul launch_consts(const Config& c) { return sm100::launch_consts(c); }
  static TileWalkShape walk_shape(const MatmulProblem&, const Config& c) { return sm100::walk_shape(c); }
  // A collective pair walks tiles two CTA tiles tall.
  static std::array<int, 3> grid_unit(const Config& c) { return {c.tile_m * c.cluster_size(), c.mma_n(), c.tile_k}; }
  // A collective pair: two CTAs along M, each with its own tile_m rows of the pair's MMA.
  static KernelShape kernel_shape(const Config& c) {
    return {c.tile_m, c.mma_n(), c.cluster_size(), 1, c.tile_k, c.max_concurrent_steps};
  }
  static Prediction predict(const MatmulProblem& p, const Config& c, const core::DeviceSpec& d,
                            const KernelDefects& defects) {
    return sm100::predict(p, c, d, defects);
  }
};

}  // namespace

const MatmulTemplate& blackwell_matmul() {
  static const TypedMatmulTemplate<Ops> t;
  return t;
}

}  // namespace mgpu::kernels::sm100
