// Transfer between shapes: before a shape is searched, the best configs of the nearest shapes
// already tuned (same template version, device, dtypes and B layout; nearness by
// kernels::shape_distance) are measured first. Contract: returns up to `shapes` configs,
// nearest shape first, one per shape (its best ok trial for this environment and source),
// never one of `problem` itself.
#pragma once

#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "kernels/matmul_problem.h"
#include "results/store.h"

namespace mgpu::harness {

struct Neighbour {
  std::string problem_key;
  double distance = 0;
  core::TuningConfig config;
};

std::vector<Neighbour> nearest_winners(results::Store& store, const results::TemplateId& tmpl,
                                       const results::Environment& env, const std::string& source,
                                       const kernels::MatmulProblem& problem, int shapes);

}  // namespace mgpu::harness
