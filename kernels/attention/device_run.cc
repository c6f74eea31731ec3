#include "kernels/attention/device_run.h"

#include <random>
#include <span>

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

}  // namespace

AttentionRun run_attention(const AttentionProblem& p, const AttentionConfig& c, std::uint64_t seed, int timed_launches,
                           bool compare) {
  const BuiltAttention built = build_attention_sm90(p, c);
  const core::CompileResult compiled = core::compile_module(built.mlir, core::parse_arch("sm_90a"));
  const core::CompiledUnit& unit = compiled.units.at(0);
  AttentionRun run;
  const core::KernelResources& res = unit.cubin.kernels.at(built.kernel_name);
  run.registers = res.registers;
  run.spill_bytes = res.spill_store_bytes + res.spill_load_bytes;

  core::CudaContext::primary();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto draw = [&](std::int64_t n, double spread) {
    std::vector<std::uint16_t> w(static_cast<std::size_t>(n));
    for (auto& x : w) x = encode(p.dtype, spread * normal(rng));
    return w;
  };
  const std::vector<std::uint16_t> q = draw(p.q_elements(), 1.5), k = draw(p.kv_elements(), 1.5), v = draw(p.kv_elements(), 1.0);
  auto upload = [](const std::vector<std::uint16_t>& w) {
    core::DeviceBuffer b(w.size() * 2);
    b.upload(std::as_bytes(std::span(w)));
    return b;
  };
  core::DeviceBuffer dq = upload(q), dk = upload(k), dv = upload(v);
  core::DeviceBuffer dout(static_cast<std::size_t>(p.q_elements()) * 2), dlse(static_cast<std::size_t>(p.lse_elements()) * 4);
  dout.fill_bytes(0xFF);
  dlse.fill_bytes(0xFF);
  std::vector<core::DeviceBuffer> maps;
  const CUdeviceptr bases[3] = {dq.ptr(), dk.ptr(), dv.ptr()};
  for (int i = 0; i < 3; ++i) {
    const CUtensorMap m = core::encode_tensor_map(tensor_map(p, c, i == 0, bases[i]));
    maps.emplace_back(sizeof m).upload(std::as_bytes(std::span(&m, 1)));
  }
  CUdeviceptr map_ptrs[3] = {maps[0].ptr(), maps[1].ptr(), maps[2].ptr()};
  CUdeviceptr out_ptr = dout.ptr(), lse_ptr = dlse.ptr();
  std::int32_t seq_q = static_cast<std::int32_t>(p.seq_q), seq_kv = static_cast<std::int32_t>(p.seq_kv),
               group = static_cast<std::int32_t>(p.group_size());
  void* args[] = {&map_ptrs[0], &map_ptrs[1], &map_ptrs[2], &out_ptr, &lse_ptr, &seq_q, &seq_kv, &group};

  const core::LoadedModule module(core::loadable_image(unit.ptx, unit.cubin.image));
  const CUfunction fn = module.function(built.kernel_name);
  core::LaunchSpec spec;
  spec.grid = {built.grid[0], built.grid[1], built.grid[2]};
  spec.block = {static_cast<unsigned>(built.block_threads), 1, 1};
  spec.dynamic_smem_bytes = static_cast<unsigned>(built.dynamic_smem_bytes);
  core::launch(fn, spec, args);
  core::CudaContext::primary().synchronize();
  if (core::CudaDriver::get().emulated()) run.device_report = core::CudaDriver::get().last_emulated_launch();

  std::vector<std::uint16_t> out(static_cast<std::size_t>(p.q_elements()));
  std::vector<float> lse(static_cast<std::size_t>(p.lse_elements()));
  dout.download(std::as_writable_bytes(std::span(out)));
  dlse.download(std::as_writable_bytes(std::span(lse)));
  if (compare) {
    const AttentionReference ref = reference_attention(p, q, k, v);
    ToleranceOptions opt;
    opt.min_block_kv = c.block_kv;
    run.comparison = compare_attention(p, ref, out, lse, opt);
    run.compared = true;
  }

  if (timed_launches > 0) {
    core::launch(fn, spec, args);  // warm-up
    for (int i = 0; i < timed_launches; ++i) {
      Event start, stop;
      start.record();
      core::launch(fn, spec, args);
      stop.record();
      run.times_ms.push_back(stop.since(start));
    }
  }
  return run;
}

}  // namespace mgpu::kernels::attention
