#include "kernels/matmul_sm90/cost_model.h"

namespace mgpu::kernels::sm90 {

PersistentCost cost_terms(const MatmulConfig& c) {
  PersistentCost t;
  t.cta_tile_m = c.cta_tile_m();
  t.cta_tile_n = c.cta_tile_n();
  t.cluster_m = c.cluster_dimension == ClusterDim::M ? 2 : 1;
  t.cluster_n = c.cluster_dimension == ClusterDim::N ? 2 : 1;
  t.tile_k = c.tile_k;
  t.max_concurrent_steps = c.max_concurrent_steps;
  t.grid_minor_dim = c.grid_minor_dim;
  t.grid_tile_width = c.grid_tile_width;
  t.epilogue_pieces = double(c.tile_m / c.epi_tile_m) * (c.tile_n / c.epi_tile_n);
  return t;
}

Prediction predict(const MatmulProblem& p, const MatmulConfig& c, const core::DeviceSpec& d) {
  return predict_persistent(p, cost_terms(c), d);
}

}  // namespace mgpu::kernels::sm90
