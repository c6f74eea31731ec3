#include "tests/support/matmul_on_device.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/compiler.h"
#include "core/half.h"
#include "core/cuda_driver.h"
#include "core/cuda_context.h"
#include "core/cuda_kernel.h"
#include "core/prepared_launch.h"
#include "kernels/matmul_template.h"
#include "tests/support/gpu_test.h"

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
  core::CudaContext& ctx = core::CudaContext::primary();

  std::vector<std::uint16_t> a = random_bf16(p.m * p.k, seed), b = random_bf16(p.k * p.n, seed + 1);
  if (p.in_dtype != kernels::DType::BF16) throw std::invalid_argument("matmul_error_of_kernel: bf16 inputs only");
  const int out = kernels::size_in_bytes(p.out_dtype);
  core::DeviceBuffer da(a.size() * 2), db(b.size() * 2), dc(p.m * p.n * out);
  da.upload(std::as_bytes(std::span(a)));
  db.upload(std::as_bytes(std::span(b)));
  dc.fill_bytes(0xFF);  // NaN poison: an unwritten element fails
  std::vector<CUdeviceptr> bases = {da.ptr(), db.ptr(), dc.ptr()};
  std::optional<core::DeviceBuffer> ws = core::zeroed_workspace(t.workspace_bytes(p, cfg, sm_count));
  core::PreparedLaunch launch(k, bases, t.scalar_args(p, cfg), t.grid(p, cfg, sm_count), core::workspace_ptr(ws));
  core::LoadedModule mod(core::loadable_image(r.units.at(0).ptx, r.units.at(0).cubin.image));
  CUfunction fn = mod.function(k.kernel_name);
  auto t0 = std::chrono::steady_clock::now();
  launch.launch(fn);
  ctx.synchronize();
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
  std::vector<std::uint8_t> c(p.m * p.n * out);
  dc.download(std::as_writable_bytes(std::span(c)));
  auto element = [&](std::int64_t i) -> double {  // C in the problem's output type
    if (p.out_dtype == kernels::DType::F32) {
      float f;
      std::memcpy(&f, &c[i * 4], 4);
      return f;
    }
    std::uint16_t h;
    std::memcpy(&h, &c[i * 2], 2);
    return p.out_dtype == kernels::DType::F16 ? core::from_f16(h) : from_bf16(h);
  };

  double err = 0, norm = 0;
  std::vector<double> row(p.n);
  for (std::int64_t m = 0; m < p.m; ++m) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::int64_t kk = 0; kk < p.k; ++kk) {
      double av = from_bf16(a[m * p.k + kk]);
      for (std::int64_t n = 0; n < p.n; ++n) {
        double bv = p.b_layout == kernels::BLayout::KN ? from_bf16(b[kk * p.n + n]) : from_bf16(b[n * p.k + kk]);
        row[n] += av * bv;
      }
    }
    for (std::int64_t n = 0; n < p.n; ++n) {
      double got = element(m * p.n + n);
      if (std::isnan(got)) return INFINITY;
      err += (got - row[n]) * (got - row[n]);
      norm += row[n] * row[n];
    }
  }
  return std::sqrt(err / norm);
}

}  // namespace mgpu::testing
