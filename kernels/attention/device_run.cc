#include "kernels/attention/device_run.h"

#include <optional>
#include <random>
#include <span>

#include <fmt/format.h>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/cuda_kernel.h"
#include "core/tensor_map.h"
#include "kernels/attention/reference.h"

namespace mgpu::kernels::attention {
namespace {

class Event {
 public:
  Event() { check(core::CudaDriver::get().api().cuEventCreate(&e_, CU_EVENT_DEFAULT), "cuEventCreate"); }
  ~Event() { core::CudaDriver::get().api().cuEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record() { check(core::CudaDriver::get().api().cuEventRecord(e_, nullptr), "cuEventRecord"); }
  float since(const Event& start) {
    check(core::CudaDriver::get().api().cuEventSynchronize(e_), "cuEventSynchronize");
    float ms = 0;
    check(core::CudaDriver::get().api().cuEventElapsedTime(&ms, start.e_, e_), "cuEventElapsedTime");
    return ms;
  }

 private:
  static void check(CUresult r, const char* what) { core::CudaDriver::get().check(r, what, core::ErrorKind::Launch); }
  CUevent e_{};
};

core::TensorMapND tensor_map(const AttentionProblem& p, const AttentionConfig& c, bool is_q, CUdeviceptr base) {
  const AttentionTensorMap m = attention_tensor_map(p, c, is_q);
  core::TensorMapND t;
  t.base = base;
  t.element = p.dtype == DType::F16 ? core::TmaElement::F16 : core::TmaElement::BF16;
  t.rank = 4;
  for (int i = 0; i < 4; ++i) t.dims[i] = m.dims[i], t.box[i] = m.box[i];
  for (int i = 0; i < 3; ++i) t.strides_bytes[i] = m.strides[i];
  t.swizzle = core::ir::Swizzle::B128;
  return t;
}

core::DeviceBuffer upload(const std::vector<std::uint16_t>& w) {
  core::DeviceBuffer b(w.size() * 2);
  b.upload(std::as_bytes(std::span(w)));
  return b;
}

}  // namespace

struct PreparedAttention::State {
  AttentionProblem p;
  AttentionConfig c;
  std::vector<std::uint16_t> q, k, v;
  std::optional<core::DeviceBuffer> dq, dk, dv, dout, dlse;
  std::vector<core::DeviceBuffer> maps;
  CUdeviceptr map_ptrs[3] = {0, 0, 0};
  CUdeviceptr out_ptr = 0, lse_ptr = 0;
  std::int32_t seq_q = 0, seq_kv = 0, group = 0;
  std::optional<core::LoadedModule> module;
  CUfunction fn{};
  core::LaunchSpec spec;
};

PreparedAttention::PreparedAttention(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed,
                                     const std::string& ptx, const std::string& cubin)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.p = p;
  s.c = c;
  const BuiltAttention built = attention_launch(p, c);
  core::CudaContext::primary();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto draw = [&](std::int64_t n, double spread) {
    std::vector<std::uint16_t> w(static_cast<std::size_t>(n));
    for (auto& x : w) x = encode(p.dtype, spread * normal(rng));
    return w;
  };
  s.q = draw(p.q_elements(), 1.5);
  s.k = draw(p.kv_elements(), 1.5);
  s.v = draw(p.kv_elements(), 1.0);
  s.dq.emplace(upload(s.q));
  s.dk.emplace(upload(s.k));
  s.dv.emplace(upload(s.v));
  s.dout.emplace(static_cast<std::size_t>(p.q_elements()) * 2);
  s.dlse.emplace(static_cast<std::size_t>(p.lse_elements()) * 4);
  s.dout->fill_bytes(0xFF);  // NaN poison: an element the kernel misses cannot pass
  s.dlse->fill_bytes(0xFF);
  const CUdeviceptr bases[3] = {s.dq->ptr(), s.dk->ptr(), s.dv->ptr()};
  for (int i = 0; i < 3; ++i) {
    const CUtensorMap m = core::encode_tensor_map(tensor_map(p, c, i == 0, bases[i]));
    s.maps.emplace_back(sizeof m).upload(std::as_bytes(std::span(&m, 1)));
    s.map_ptrs[i] = s.maps.back().ptr();
  }
  s.out_ptr = s.dout->ptr();
  s.lse_ptr = s.dlse->ptr();
  s.seq_q = static_cast<std::int32_t>(p.seq_q);
  s.seq_kv = static_cast<std::int32_t>(p.seq_kv);
  s.group = static_cast<std::int32_t>(p.group_size());
  s.module.emplace(core::loadable_image(ptx, cubin));
  s.fn = s.module->function(built.kernel_name);
  s.spec.grid = {built.grid[0], built.grid[1], built.grid[2]};
  s.spec.block = {static_cast<unsigned>(built.block_threads), 1, 1};
  s.spec.dynamic_smem_bytes = static_cast<unsigned>(built.dynamic_smem_bytes);
}

PreparedAttention::~PreparedAttention() = default;

void PreparedAttention::launch() {
  State& s = *s_;
  void* args[] = {&s.map_ptrs[0], &s.map_ptrs[1], &s.map_ptrs[2], &s.out_ptr, &s.lse_ptr, &s.seq_q, &s.seq_kv, &s.group};
  core::launch(s.fn, s.spec, args);
}

AttentionComparison PreparedAttention::compare() {
  State& s = *s_;
  core::CudaContext::primary().synchronize();
  std::vector<std::uint16_t> out(static_cast<std::size_t>(s.p.q_elements()));
  std::vector<float> lse(static_cast<std::size_t>(s.p.lse_elements()));
  s.dout->download(std::as_writable_bytes(std::span(out)));
  s.dlse->download(std::as_writable_bytes(std::span(lse)));
  const AttentionReference ref = reference_attention(s.p, s.q, s.k, s.v);
  ToleranceOptions opt;
  opt.min_block_kv = s.c.block_kv;
  return compare_attention(s.p, ref, out, lse, opt);
}

std::vector<std::uint8_t> PreparedAttention::output_bytes() {
  State& s = *s_;
  core::CudaContext::primary().synchronize();
  std::vector<std::uint8_t> bytes(s.dout->bytes() + s.dlse->bytes());
  s.dout->download(std::as_writable_bytes(std::span(bytes).first(s.dout->bytes())));
  s.dlse->download(std::as_writable_bytes(std::span(bytes).subspan(s.dout->bytes())));
  return bytes;
}

std::string PreparedAttention::describe_byte(std::size_t at) const {
  const State& s = *s_;
  const AttentionProblem& p = s.p;
  if (at < s.dout->bytes()) {  // O is [b][sq][h][d], as Q
    std::int64_t e = static_cast<std::int64_t>(at / 2);
    const std::int64_t d = e % p.head_dim, h = (e /= p.head_dim) % p.heads, q = (e /= p.heads) % p.seq_q, b = e / p.seq_q;
    return fmt::format("O[batch {}][row {}][head {}][dim {}]", b, q, h, d);
  }
  std::int64_t e = static_cast<std::int64_t>((at - s.dout->bytes()) / 4);  // LSE is [b][h][sq]
  const std::int64_t q = e % p.seq_q, h = (e /= p.seq_q) % p.heads, b = e / p.heads;
  return fmt::format("LSE[batch {}][head {}][row {}]", b, h, q);
}

AttentionRun run_attention(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed, int timed_launches,
                           bool compare) {
  const BuiltAttention built = build_attention_sm90(p, c);
  const core::CompileResult compiled = core::compile_module(built.mlir, core::parse_arch("sm_90a"));
  const core::CompiledUnit& unit = compiled.units.at(0);
  AttentionRun run;
  const core::KernelResources& res = unit.cubin.kernels.at(built.kernel_name);
  run.registers = res.registers;
  run.spill_bytes = res.spill_store_bytes + res.spill_load_bytes;
  run.kernel_hash = core::kernel_hash(unit.ptx);

  PreparedAttention prepared(p, c, seed, unit.ptx, unit.cubin.image);
  prepared.launch();
  core::CudaContext::primary().synchronize();
  if (core::CudaDriver::get().emulated()) run.device_report = core::CudaDriver::get().last_emulated_launch();
  if (compare) {
    run.comparison = prepared.compare();
    run.compared = true;
  }
  if (timed_launches > 0) {
    prepared.launch();  // warm-up
    for (int i = 0; i < timed_launches; ++i) {
      Event start, stop;
      start.record();
      prepared.launch();
      stop.record();
      run.times_ms.push_back(stop.since(start));
    }
  }
  return run;
}

}  // namespace mgpu::kernels::attention
