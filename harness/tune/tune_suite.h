// Tuning a suite of shapes in turn into one database: each shape gets tune() with the same
// options (its --trials budget per shape), warm-started from the shapes tuned before it. With
// `bucket`, shapes that run the same padded tile grids for every config (grid_buckets) are
// tuned once, through their first shape. Contract: the report lists every shape of the
// suite, tuned or covered by its bucket's tuned shape; an interrupt stops after the current
// shape's committed trials.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/tune/shape_suite.h"
#include "harness/tune/tuning_loop.h"

namespace mgpu::harness {

struct SuiteShapeResult {
  kernels::MatmulProblem problem;
  std::optional<TuneReport> report;  // absent when covered by a bucket or not reached
  std::string covered_by;            // the bucket's tuned shape
};

struct SuiteReport {
  std::string suite;
  std::vector<SuiteShapeResult> shapes;
  bool interrupted = false;
};

SuiteReport tune_suite(const TuneOptions& options, const ShapeSuite& suite, bool bucket,
                       const std::atomic<bool>& interrupted, const std::function<void(const Progress&)>& on_progress = {});

}  // namespace mgpu::harness
