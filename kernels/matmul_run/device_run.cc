#include "kernels/matmul_run/device_run.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <span>

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/cuda_kernel.h"
#include "core/half.h"
#include "core/prepared_launch.h"

namespace mgpu::kernels {

std::vector<std::uint16_t> seeded_input(std::size_t n, std::uint64_t seed, DType t) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = t == DType::BF16 ? core::to_bf16(dist(rng)) : core::to_f16(dist(rng));
  return v;
}

MatmulInputs matmul_inputs(const MatmulProblem& p, std::uint64_t seed) {
  const std::uint64_t base = std::hash<std::string>{}(p.key()) + 2 * (seed - 1);
  return {seeded_input(p.m * p.k, base, p.in_dtype), seeded_input(p.k * p.n, base + 1, p.in_dtype)};
}

namespace {

double input_value(const std::vector<std::uint16_t>& v, std::size_t i, DType t) {
  return t == DType::BF16 ? core::from_bf16(v[i]) : core::from_f16(v[i]);
}

template <typename T>
double relative_error_of(const std::vector<std::uint8_t>& got, DType out, const std::vector<T>& want) {
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = read_out(got, i, out);
    err += (g - want[i]) * (g - want[i]);
    norm += double(want[i]) * want[i];
  }
  const double rel = std::sqrt(err / std::max(norm, 1e-300));
  return std::isnan(rel) ? INFINITY : rel;
}

}  // namespace

std::vector<double> matmul_reference(const MatmulProblem& p, const MatmulInputs& x) {
  std::vector<double> want(static_cast<std::size_t>(p.m * p.n), 0.0);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t kk = 0; kk < p.k; ++kk) {
      const double av = input_value(x.a, i * p.k + kk, p.in_dtype);
      double* row = &want[static_cast<std::size_t>(i * p.n)];
      for (std::int64_t n = 0; n < p.n; ++n)
        row[n] += av * input_value(x.b, p.b_layout == BLayout::NK ? n * p.k + kk : kk * p.n + n, p.in_dtype);
    }
  return want;
}

double read_out(const std::vector<std::uint8_t>& c, std::size_t i, DType t) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, c.data() + 4 * i, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, c.data() + 2 * i, 2);
  return t == DType::BF16 ? core::from_bf16(h) : core::from_f16(h);
}

double relative_error(const std::vector<std::uint8_t>& got, DType out, const std::vector<float>& want) {
  return relative_error_of(got, out, want);
}
double relative_error(const std::vector<std::uint8_t>& got, DType out, const std::vector<double>& want) {
  return relative_error_of(got, out, want);
}

double verification_threshold(DType out) { return out == DType::BF16 ? 1e-2 : out == DType::F16 ? 2e-3 : 1e-4; }

int device_sm_count() {
  const core::CudaDriver& drv = core::CudaDriver::get();
  int v = 0;
  drv.check(drv.api().cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, core::CudaContext::primary().device()),
            "cuDeviceGetAttribute", core::ErrorKind::Unavailable);
  return v;
}

struct PreparedMatmul::State {
  core::CudaContext& context = core::CudaContext::primary();  // current on this thread before any allocation
  MatmulProblem p;
  MatmulInputs x;
  std::optional<std::vector<double>> reference;  // on first use
  core::DeviceBuffer da, db, dc;
  int sms;  // the SMs the grid is sized for
  std::optional<core::DeviceBuffer> workspace;
  core::BuiltKernel kernel;
  std::optional<core::PreparedLaunch> prepared;
  core::LoadedModule module;
  CUfunction fn{};

  State(const MatmulTemplate& t, const MatmulProblem& prob, const core::TuningConfig& c, std::uint64_t seed,
        const std::string& ptx, const std::string& cubin, int sm_count, const core::BuiltKernel* built)
      : p(prob),
        x(matmul_inputs(prob, seed)),
        da(x.a.size() * size_in_bytes(prob.in_dtype)),
        db(x.b.size() * size_in_bytes(prob.in_dtype)),
        dc(static_cast<std::size_t>(prob.m * prob.n * size_in_bytes(prob.out_dtype))),
        sms(sm_count > 0 ? sm_count : device_sm_count()),
        workspace(core::zeroed_workspace(t.workspace_bytes(prob, c, sms))),
        kernel(built ? *built : t.build(prob, c)),
        module(core::loadable_image(ptx, cubin)) {
    da.upload(std::as_bytes(std::span(x.a)));
    db.upload(std::as_bytes(std::span(x.b)));
    dc.fill_bytes(0xFF);  // NaN poison: an element the kernel misses cannot pass
    const std::vector<CUdeviceptr> bases = {da.ptr(), db.ptr(), dc.ptr()};
    prepared.emplace(kernel, bases, t.scalar_args(p, c), t.grid(p, c, sms), core::workspace_ptr(workspace));
    fn = module.function(kernel.kernel_name);
  }
};

PreparedMatmul::PreparedMatmul(const MatmulTemplate& t, const MatmulProblem& p, const core::TuningConfig& c,
                               std::uint64_t seed, const std::string& ptx, const std::string& cubin, int sm_count,
                               const core::BuiltKernel* built)
    : s_(std::make_unique<State>(t, p, c, seed, ptx, cubin, sm_count, built)) {}

PreparedMatmul::~PreparedMatmul() = default;

void PreparedMatmul::launch() { s_->prepared->launch(s_->fn); }

std::vector<std::uint8_t> PreparedMatmul::output_bytes() {
  core::CudaContext::primary().synchronize();
  std::vector<std::uint8_t> got(s_->dc.bytes());
  s_->dc.download(std::as_writable_bytes(std::span(got)));
  return got;
}

double PreparedMatmul::relative_error_to_reference() {
  const std::vector<std::uint8_t> got = output_bytes();
  if (!s_->reference) s_->reference = matmul_reference(s_->p, s_->x);
  return relative_error(got, s_->p.out_dtype, *s_->reference);
}

std::string PreparedMatmul::describe_byte(std::size_t at) const {
  const std::size_t e = at / static_cast<std::size_t>(size_in_bytes(s_->p.out_dtype));
  return fmt::format("C[{}][{}]", e / static_cast<std::size_t>(s_->p.n), e % static_cast<std::size_t>(s_->p.n));
}

CUdeviceptr PreparedMatmul::a() const { return s_->da.ptr(); }
CUdeviceptr PreparedMatmul::b() const { return s_->db.ptr(); }

}  // namespace mgpu::kernels
