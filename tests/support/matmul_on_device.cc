#include "tests/support/matmul_on_device.h"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "kernels/matmul_run/device_run.h"
#include "kernels/matmul_template.h"

namespace mgpu::testing {

double matmul_error_on_device(const kernels::MatmulProblem& p, const std::string& config_json, int sm_count, unsigned seed,
                              double* launch_seconds) {
  const kernels::MatmulTemplate& t = kernels::matmul_template(core::parse_arch("sm_90a"));
  return matmul_error_of_kernel(p, t.build(p, core::TuningConfig::from_json(config_json)), config_json, sm_count, seed,
                                launch_seconds);
}

double matmul_error_of_kernel(const kernels::MatmulProblem& p, const core::BuiltKernel& k, const std::string& config_json,
                              int sm_count, unsigned seed, double* launch_seconds) {
  const core::ArchSpec& arch = core::parse_arch("sm_90a");
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  core::TuningConfig cfg = core::TuningConfig::from_json(config_json);
  core::CompileResult r = core::compile_module(k.mlir, arch);
  kernels::PreparedMatmul run(t, p, cfg, seed, r.units.at(0).ptx, r.units.at(0).cubin.image, sm_count, &k);
  auto t0 = std::chrono::steady_clock::now();
  run.launch();
  core::CudaContext::primary().synchronize();
  if (launch_seconds) *launch_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // On the virtual device a right answer is not enough: its checkers must have found nothing
  // but notes (a TMA store box wholly outside C writes nothing, legally).
  if (core::CudaDriver::get().emulated()) {
    nlohmann::json j = nlohmann::json::parse(core::CudaDriver::get().last_emulated_launch());
    std::string findings;
    for (const auto& r : j.value("reports", nlohmann::json::array()))
      if (!r.value("note", false)) findings += "\n  " + r.value("kind", "") + ": " + r.value("message", "");
    if (!findings.empty()) throw std::runtime_error("the virtual device's checkers found:" + findings);
  }
  return run.relative_error_to_reference();
}

}  // namespace mgpu::testing
