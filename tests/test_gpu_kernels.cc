// On a Hopper GPU: kernels built with the MGPU helpers give correct results. A TMA round trip
// (ragged shape, output poisoned first) and a one-tile TMA + wgmma product checked against a
// float64 reference. Without an sm_90 GPU every test skips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/cuda_kernel.h"
#include "core/device_query.h"
#include "core/ir/barrier.h"
#include "core/ir/kernel_module.h"
#include "core/ir/tma.h"
#include "core/ir/wgmma.h"
#include "core/mlir_context.h"
#include "core/tensor_map.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "tests/support/gpu_test.h"

namespace mgpu::core {
namespace {

using namespace mgpu::core::ir;
using mlir::Value;

using GpuKernels = ::mgpu::testing::HopperGpuTest;
using ::mgpu::testing::from_bf16;
using ::mgpu::testing::random_bf16;

// A device copy of a CUtensorMap: kernels take descriptors as pointers to global memory.
DeviceBuffer descriptor_on_device(const TensorMap2D& t) {
  CUtensorMap map = encode_tensor_map_2d(t);
  DeviceBuffer buf(sizeof map);
  buf.upload(std::as_bytes(std::span(&map, 1)));
  return buf;
}

std::string build(const std::function<void(KernelModule&, KernelBody&)>& emit, int threads) {
  auto ctx = make_mlir_context();
  KernelModule km(*ctx, "gpu_test");
  mlir::OpBuilder probe(ctx.get());
  mlir::Type ptr = Emitter{probe, probe.getUnknownLoc()}.global_ptr_type();
  KernelBody kb = km.add_kernel("k", {ptr, ptr, ptr}, threads);
  emit(km, kb);
  CompileResult r = compile_module(km.to_text(), parse_arch("sm_90a"));
  return loadable_image(r.units.at(0).ptx, r.units.at(0).cubin.image);
}

TEST_F(GpuKernels, TmaRoundTripCopiesARaggedTensorExactly) {
  CudaContext& ctx = CudaContext::primary();
  constexpr int kRows = 200, kCols = 192, kBox = 64, kTileBytes = kBox * kBox * 2;
  std::string cubin = build([&](KernelModule& km, KernelBody& kb) {
    Emitter& e = kb.e;
    Value smem = km.dynamic_smem(e);
    BarrierRing bar(e.smem_offset(smem, kTileBytes), 1);
    Value leader = e.eq(e.thread_idx(), e.c32(0));
    e.if_then(leader, [&] {
      bar.init(e, 1);
      fence_barrier_init(e);
    });
    e.barrier_sync();
    std::vector<Value> coords = {e.mul(e.block_idx(0), e.c32(kBox)), e.mul(e.block_idx(1), e.c32(kBox))};
    e.if_then(leader, [&] {
      bar.arrive_expect_tx(e, e.c32(0), kTileBytes);  // out-of-bounds fill counts too
      tma_load(e, kb.args[0], smem, bar.slot_ptr(e, e.c32(0)), coords);
    });
    bar.wait(e, e.c32(0), e.c32(0));
    e.if_then(leader, [&] {
      tma_store(e, kb.args[1], smem, coords);
      tma_store_commit(e);
      tma_store_wait(e, 0, false);
    });
  }, 128);

  std::vector<std::uint16_t> host = random_bf16(kRows * kCols, 1234);
  DeviceBuffer in(host.size() * 2), out(host.size() * 2), unused(16);
  in.upload(std::as_bytes(std::span(host)));
  out.fill_bytes(0xFF);  // NaN poison
  TensorMap2D t{.base = 0, .element = TmaElement::BF16, .rows = kRows, .cols = kCols, .row_stride_bytes = kCols * 2,
                .box_rows = kBox, .box_cols = kBox, .swizzle = Swizzle::B128};
  t.base = in.ptr();
  DeviceBuffer din = descriptor_on_device(t);
  t.base = out.ptr();
  DeviceBuffer dout = descriptor_on_device(t);

  LoadedModule mod(cubin);
  CUdeviceptr a0 = din.ptr(), a1 = dout.ptr(), a2 = unused.ptr();
  void* args[] = {&a0, &a1, &a2};
  LaunchSpec spec{.grid = {kCols / kBox, (kRows + kBox - 1) / kBox, 1}, .block = {128, 1, 1}, .cluster = {1, 1, 1},
                  .dynamic_smem_bytes = kTileBytes + 64};
  launch(mod.function("k"), spec, args);
  ctx.synchronize();
  std::vector<std::uint16_t> back(host.size());
  out.download(std::as_writable_bytes(std::span(back)));
  EXPECT_EQ(back, host);
}

TEST_F(GpuKernels, OneTileWgmmaMatchesAFloat64Reference) {
  CudaContext& ctx = CudaContext::primary();
  constexpr int M = 64, N = 128, K = 64, kA = M * K * 2, kB = N * K * 2;
  std::string cubin = build([&](KernelModule& km, KernelBody& kb) {
    Emitter& e = kb.e;
    Value smem = km.dynamic_smem(e);
    Value a = smem, b = e.smem_offset(smem, kA);
    BarrierRing bar(e.smem_offset(smem, kA + kB), 1);
    Value leader = e.eq(e.thread_idx(), e.c32(0));
    e.if_then(leader, [&] {
      bar.init(e, 1);
      fence_barrier_init(e);
    });
    e.barrier_sync();
    e.if_then(leader, [&] {
      bar.arrive_expect_tx(e, e.c32(0), kA + kB);
      tma_load(e, kb.args[0], a, bar.slot_ptr(e, e.c32(0)), {e.c32(0), e.c32(0)});
      tma_load(e, kb.args[1], b, bar.slot_ptr(e, e.c32(0)), {e.c32(0), e.c32(0)});
    });
    bar.wait(e, e.c32(0), e.c32(0));
    Value acc = wgmma_zero_accumulator(e, N);
    wgmma_fence(e);
    for (int k = 0; k < K / 16; ++k) {  // K-major, 128-byte swizzle: k16 steps are 32 bytes apart
      Value da = smem_descriptor(e, e.smem_offset(a, 32 * k), Swizzle::B128, 16, 1024);
      Value db = smem_descriptor(e, e.smem_offset(b, 32 * k), Swizzle::B128, 16, 1024);
      acc = wgmma(e, acc, da, db, N, MmaInput::BF16, true, true);
    }
    wgmma_commit(e);
    wgmma_wait(e, 0);
    // D fragment (PTX ISA, wgmma m64nNk16): value i of lane l in warp w sits at
    // row 16w + l/4 + 8*((i%4)/2), column 8*(i/4) + 2*(l%4) + i%2.
    Value t = e.thread_idx(), w = e.div(t, e.c32(32)), l = e.rem(t, e.c32(32));
    Value row0 = e.add(e.mul(w, e.c32(16)), e.div(l, e.c32(4)));
    Value col0 = e.mul(e.rem(l, e.c32(4)), e.c32(2));
    for (int i = 0; i < N / 2; ++i) {
      Value row = e.add(row0, e.c32(8 * ((i % 4) / 2)));
      Value col = e.add(col0, e.c32(8 * (i / 4) + i % 2));
      Value p = mlir::LLVM::GEPOp::create(e.b, e.loc, e.global_ptr_type(), e.b.getF32Type(), kb.args[2],
                                          llvm::ArrayRef<mlir::LLVM::GEPArg>{e.add(e.mul(row, e.c32(N)), col)});
      mlir::LLVM::StoreOp::create(e.b, e.loc, mlir::LLVM::ExtractValueOp::create(e.b, e.loc, acc, i), p);
    }
  }, 128);

  std::vector<std::uint16_t> ha = random_bf16(M * K, 7), hb = random_bf16(N * K, 8);
  DeviceBuffer da(kA), db(kB), dc(M * N * 4);
  da.upload(std::as_bytes(std::span(ha)));
  db.upload(std::as_bytes(std::span(hb)));
  dc.fill_bytes(0xFF);
  TensorMap2D ta{.base = da.ptr(), .element = TmaElement::BF16, .rows = M, .cols = K, .row_stride_bytes = K * 2,
                 .box_rows = M, .box_cols = K, .swizzle = Swizzle::B128};
  TensorMap2D tb = ta;
  tb.base = db.ptr();
  tb.rows = N;
  tb.box_rows = N;
  DeviceBuffer desc_a = descriptor_on_device(ta), desc_b = descriptor_on_device(tb);

  LoadedModule mod(cubin);
  CUdeviceptr a0 = desc_a.ptr(), a1 = desc_b.ptr(), a2 = dc.ptr();
  void* args[] = {&a0, &a1, &a2};
  launch(mod.function("k"), LaunchSpec{.grid = {1, 1, 1}, .block = {128, 1, 1}, .cluster = {1, 1, 1},
                                       .dynamic_smem_bytes = kA + kB + 64},
         args);
  ctx.synchronize();
  std::vector<float> c(M * N);
  dc.download(std::as_writable_bytes(std::span(c)));
  double err = 0, ref_norm = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(from_bf16(ha[m * K + k])) * double(from_bf16(hb[n * K + k]));
      ASSERT_FALSE(std::isnan(c[m * N + n])) << "unwritten or NaN at " << m << "," << n;
      err += (c[m * N + n] - ref) * (c[m * N + n] - ref);
      ref_norm += ref * ref;
    }
  EXPECT_LT(std::sqrt(err / ref_norm), 1e-5);  // exact bf16 products, f32 sums
}

}  // namespace
}  // namespace mgpu::core
