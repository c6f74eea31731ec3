// One trial to measure: which template config, on which problem and target, how (measurer,
// stopping rule, verification). It crosses the pipe to a worker process as one line of JSON.
// `debug_fault` ("crash", "hang", "exit", or "oob": a kernel with a wild store) makes a worker
// fail on purpose: the tests of crash containment use it; nothing else should.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/tuning_config.h"
#include "harness/measure/stopping_rule.h"
#include "kernels/matmul_common/kernel_defects.h"
#include "kernels/matmul_problem.h"

namespace mgpu::harness {

struct TrialRequest {
  std::string arch = "sm_90a";
  // The op (kernels/op_registry.h) and its problem's key; a matmul's problem is `problem`.
  std::string op = "matmul";
  std::string problem_key;
  kernels::MatmulProblem problem;
  core::TuningConfig config;
  std::string measurer = "model";  // "model" | "cuda"
  StoppingRule rule = StoppingRule::quick();
  bool verify = true;
  // model: compile the kernel first, so only configs that build get a prediction (a compile
  // failure is a compile_error trial, as on the GPU); the cuda measurer always compiles.
  bool compile = true;
  std::string timer = "auto";  // cuda: "auto" (CUPTI if it opens, else events) | "cupti" | "events"
  std::string debug_fault;
  // emulate: schedules to run (seeds 1, 4, 2, 3, 5, 8, ...: every fourth delays async work to
  // its latest legal moment, odd ones hand over to woken waiters at once); and the SM count the
  // persistent grid is sized for (0: the device's), so a small problem can give CTAs several tiles.
  int seeds = 1;
  int sm_count = 0;
  // model: the compiled kernel's lints in the cost model's terms (issue 19; the tuning loop
  // reads them from the store); the default (known = false) predicts without lint penalties.
  kernels::KernelDefects defects;
};

void to_json(nlohmann::json& j, const TrialRequest& r);
void from_json(const nlohmann::json& j, TrialRequest& r);

}  // namespace mgpu::harness
