// Each MGPU primitive, built through the C++ helpers into a small kernel, compiles for its
// arch through the whole pipeline (the assembler accepts it) and its PTX holds the
// instructions meant.
#include <gtest/gtest.h>

#include <functional>

#include "core/compiler.h"
#include "core/error.h"
#include "core/ir/barrier.h"
#include "core/ir/kernel_module.h"
#include "core/ir/roles.h"
#include "core/ir/smem_plan.h"
#include "core/ir/tcgen05.h"
#include "core/ir/tma.h"
#include "core/ir/wgmma.h"
#include "core/mlir_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"

namespace mgpu::core::ir {
namespace {

using mlir::Value;

// Builds kernel `k(ptr, ptr, ptr)` whose body `emit` writes, compiles it, returns the PTX.
std::string compile_kernel(const char* arch, int block_threads,
                           const std::function<void(KernelModule&, KernelBody&)>& emit) {
  auto ctx = make_mlir_context();
  KernelModule km(*ctx, "prims");
  mlir::OpBuilder probe(ctx.get());
  Emitter tmp{probe, probe.getUnknownLoc()};
  mlir::Type ptr = tmp.global_ptr_type();
  KernelBody kb = km.add_kernel("k", {ptr, ptr, ptr}, block_threads);
  emit(km, kb);
  CompileResult r = compile_module(km.to_text(), parse_arch(arch));
  EXPECT_EQ(r.units.size(), 1u);
  EXPECT_FALSE(r.units.at(0).cubin.image.empty());
  return r.units.at(0).ptx;
}

// Looks for each instruction in the PTX with runs of blanks folded to one space (LLVM
// separates opcode and operands with a tab).
void expect_has(const std::string& ptx, std::initializer_list<const char*> needles) {
  std::string folded;
  for (char c : ptx) {
    bool blank = c == ' ' || c == '\t';
    if (blank && !folded.empty() && folded.back() == ' ') continue;
    folded += blank ? ' ' : c;
  }
  for (const char* n : needles) EXPECT_NE(folded.find(n), std::string::npos) << "missing '" << n << "' in PTX:\n" << ptx;
}

// Stores a value to out[0] so nothing the test emits is dead code.
void keep(Emitter& e, Value out, Value v) { mlir::LLVM::StoreOp::create(e.b, e.loc, v, out); }

TEST(MgpuPrimitives, TmaRoundTripWithBarrierRing) {
  std::string ptx = compile_kernel("sm_90a", 128, [](KernelModule& km, KernelBody& kb) {
    Emitter& e = kb.e;
    SmemPlan plan;
    int64_t tile = plan.alloc("tile", 128 * 64 * 2, 1024);
    int64_t bars = plan.alloc("barriers", BarrierRing::bytes(2), 8);
    Value smem = km.dynamic_smem(e);
    BarrierRing ring(e.smem_offset(smem, bars), 2);
    Value tile_ptr = e.smem_offset(smem, tile);
    Value is_leader = e.eq(e.thread_idx(), e.c32(0));
    e.if_then(is_leader, [&] {
      ring.init(e, 1);
      fence_barrier_init(e);
    });
    e.barrier_sync();
    Value step = e.block_idx(0);
    SlotPhase sp = BarrierRing::slot_phase(e, step, ring.depth());
    e.if_then(is_leader, [&] {
      tma_prefetch_descriptor(e, kb.args[0]);
      ring.arrive_expect_tx(e, sp.slot, 128 * 64 * 2);
      tma_load(e, kb.args[0], tile_ptr, ring.slot_ptr(e, sp.slot), {e.c32(0), e.mul(step, e.c32(128))});
    });
    ring.wait(e, sp.slot, sp.parity);
    fence_proxy_async_shared(e);
    e.if_then(is_leader, [&] {
      tma_store(e, kb.args[1], tile_ptr, {e.c32(0), e.mul(step, e.c32(128))});
      tma_store_commit(e);
      tma_store_wait(e, 0, /*read_only=*/true);
    });
  });
  expect_has(ptx, {"mbarrier.init.shared", "fence.mbarrier_init", "prefetch.tensormap",
                   "mbarrier.arrive.expect_tx", "cp.async.bulk.tensor.2d.shared::cluster.global",
                   "mbarrier.try_wait.parity", "fence.proxy.async.shared::cta",
                   "cp.async.bulk.tensor.2d.global.shared::cta", "cp.async.bulk.commit_group",
                   "cp.async.bulk.wait_group.read 0", ".extern .shared .align 1024 .b8 mgpu_dynamic_smem"});
}

TEST(MgpuPrimitives, TmaMulticastToTheCluster) {
  std::string ptx = compile_kernel("sm_90a", 128, [](KernelModule& km, KernelBody& kb) {
    Emitter& e = kb.e;
    Value smem = km.dynamic_smem(e);
    Value bar = e.smem_offset(smem, 16384);
    Value mask = mlir::arith::ConstantIntOp::create(e.b, e.loc, 0b11, 16);
    tma_load(e, kb.args[0], smem, bar, {e.c32(0), e.c32(0)}, mask);
  });
  expect_has(ptx, {"cp.async.bulk.tensor.2d.shared::cluster.global", ".multicast::cluster"});
}

TEST(MgpuPrimitives, WgmmaOneTile) {
  std::string ptx = compile_kernel("sm_90a", 128, [](KernelModule& km, KernelBody& kb) {
    Emitter& e = kb.e;
    Value smem = km.dynamic_smem(e);
    Value a = smem, b = e.smem_offset(smem, 64 * 64 * 2);
    Value acc = wgmma_zero_accumulator(e, 128);
    wgmma_fence(e);
    for (int k = 0; k < 4; ++k) {  // K = 64: four k16 steps, 32 bytes apart inside the swizzle atom
      Value da = smem_descriptor(e, e.smem_offset(a, 32 * k), Swizzle::B128, 16, 1024);
      Value db = smem_descriptor(e, e.smem_offset(b, 32 * k), Swizzle::B128, 16, 1024);
      acc = wgmma(e, acc, da, db, 128, MmaInput::BF16, true, true);
    }
    wgmma_commit(e);
    wgmma_wait(e, 0);
    Value sum = mlir::LLVM::ExtractValueOp::create(e.b, e.loc, acc, 0);
    for (int i = 1; i < 64; ++i)
      sum = mlir::arith::AddFOp::create(e.b, e.loc, sum, mlir::LLVM::ExtractValueOp::create(e.b, e.loc, acc, i));
    keep(e, kb.args[2], sum);
  });
  expect_has(ptx, {"wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
                   "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0"});
}

TEST(MgpuPrimitives, WarpgroupRolesAndCluster) {
  std::string ptx = compile_kernel("sm_90a", 384, [](KernelModule&, KernelBody& kb) {
    Emitter& e = kb.e;
    Value wg = e.warpgroup_idx();
    e.if_then(e.eq(wg, e.c32(0)), [&] { setmaxnreg(e, 40, false); });
    e.if_then(e.ult(e.c32(0), wg), [&] { setmaxnreg(e, 232, true); });
    Value leader = elect_one(e);
    e.if_then(leader, [&] { keep(e, kb.args[2], e.add(cluster_cta_rank(e), cluster_cta_id(e, 0))); });
    cluster_sync(e);
  });
  expect_has(ptx, {"setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232", "elect.sync",
                   "%cluster_ctarank", "%cluster_ctaid.x", "barrier.cluster.arrive", "barrier.cluster.wait"});
}

void tcgen05_kernel(KernelModule& km, KernelBody& kb, bool two_cta) {
  Emitter& e = kb.e;
  Value smem = km.dynamic_smem(e);
  Value slot = e.smem_offset(smem, 0);
  Value bar = e.smem_offset(smem, 8);
  Value a = e.smem_offset(smem, 1024), b = e.smem_offset(smem, 1024 + 128 * 64 * 2);
  Value warp0 = e.eq(e.warp_idx(), e.c32(0));
  Value leader = e.eq(e.thread_idx(), e.c32(0));
  e.if_then(leader, [&] {
    BarrierRing(bar, 1).init(e, 1);
    fence_barrier_init(e);
  });
  e.if_then(warp0, [&] {
    tmem_alloc(e, slot, 128, two_cta);
    tmem_relinquish(e, two_cta);
  });
  e.barrier_sync();
  Value tmem = tmem_address(e, slot);
  e.if_then(leader, [&] {
    Value da = smem_descriptor(e, a, Swizzle::B128, 16, 1024);
    Value db = smem_descriptor(e, b, Swizzle::B128, 16, 1024);
    Value idesc = e.c32(tcgen05_instr_descriptor(128, 128, MmaInput::BF16, false, false));
    Value no_acc = mlir::arith::ConstantIntOp::create(e.b, e.loc, 0, 1);
    tcgen05_mma(e, tmem, da, db, idesc, no_acc, two_cta);
    tcgen05_commit(e, bar, Value(), two_cta);
  });
  BarrierRing(bar, 1).wait(e, e.c32(0), e.c32(0));
  Value v = tmem_load(e, tmem, 16);
  keep(e, kb.args[2], mlir::LLVM::ExtractElementOp::create(e.b, e.loc, v, e.c32(3)));
  e.barrier_sync();
  e.if_then(warp0, [&] { tmem_dealloc(e, tmem, 128, two_cta); });
}

TEST(MgpuPrimitives, Tcgen05MmaThroughTensorMemory) {
  std::string ptx = compile_kernel("sm_100a", 128, [](KernelModule& km, KernelBody& kb) { tcgen05_kernel(km, kb, false); });
  expect_has(ptx, {"tcgen05.alloc.cta_group::1", "tcgen05.relinquish_alloc_permit.cta_group::1",
                   "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.commit.cta_group::1",
                   "tcgen05.ld.sync.aligned.32x32b.x16", "tcgen05.wait::ld", "tcgen05.dealloc.cta_group::1"});
}

TEST(MgpuPrimitives, Tcgen05PairedCtas) {
  std::string ptx = compile_kernel("sm_100a", 128, [](KernelModule& km, KernelBody& kb) { tcgen05_kernel(km, kb, true); });
  expect_has(ptx, {"tcgen05.alloc.cta_group::2", "tcgen05.mma.cta_group::2.kind::f16", "tcgen05.commit.cta_group::2"});
}

TEST(MgpuPrimitives, BlackwellInstructionsAreRejectedForHopper) {
  try {
    compile_kernel("sm_90a", 128, [](KernelModule& km, KernelBody& kb) { tcgen05_kernel(km, kb, false); });
    FAIL() << "tcgen05 compiled for sm_90a";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Compile);
  }
}

TEST(SmemPlan, AlignsRegionsAndCountsTheTotal) {
  SmemPlan p;
  EXPECT_EQ(p.alloc("bars", 24, 8), 0);
  EXPECT_EQ(p.alloc("a", 16384, 1024), 1024);
  EXPECT_EQ(p.alloc("flag", 4, 4), 1024 + 16384);
  EXPECT_EQ(p.total_bytes(), 1024 + 16384 + 4);
  EXPECT_EQ(p.region("a").bytes, 16384);
  EXPECT_THROW(p.alloc("a", 8, 8), Error);
  EXPECT_THROW(p.alloc("odd", 8, 24), Error);
  EXPECT_THROW(p.region("nope"), Error);
}

TEST(Descriptors, WgmmaBitsFollowThePtxLayout) {
  std::uint64_t d = wgmma_descriptor_bits(Swizzle::B128, 16, 1024);
  EXPECT_EQ((d >> 16) & 0x3FFF, 1u);    // 16 >> 4
  EXPECT_EQ((d >> 32) & 0x3FFF, 64u);   // 1024 >> 4
  EXPECT_EQ(d >> 62, 1u);               // 128-byte swizzle
  EXPECT_EQ(d & 0x3FFF, 0u);            // the address is added at run time
  EXPECT_EQ(wgmma_descriptor_bits(Swizzle::B64, 0, 0) >> 62, 2u);
  EXPECT_EQ(wgmma_descriptor_bits(Swizzle::B32, 0, 0) >> 62, 3u);
  EXPECT_EQ(wgmma_descriptor_bits(Swizzle::None, 0, 0) >> 62, 0u);
}

TEST(Descriptors, Tcgen05InstructionDescriptor) {
  std::uint32_t d = tcgen05_instr_descriptor(128, 256, MmaInput::BF16, false, true);
  EXPECT_EQ((d >> 4) & 3, 1u);      // f32 accumulator
  EXPECT_EQ((d >> 7) & 7, 1u);      // A bf16
  EXPECT_EQ((d >> 10) & 7, 1u);     // B bf16
  EXPECT_EQ((d >> 15) & 1, 0u);     // A K-major
  EXPECT_EQ((d >> 16) & 1, 1u);     // B MN-major
  EXPECT_EQ((d >> 17) & 63, 32u);   // N >> 3
  EXPECT_EQ((d >> 24) & 31, 8u);    // M >> 4
  EXPECT_EQ((tcgen05_instr_descriptor(64, 8, MmaInput::F16, false, false) >> 7) & 7, 0u);
  EXPECT_THROW(tcgen05_instr_descriptor(96, 128, MmaInput::BF16, false, false), Error);
  EXPECT_THROW(tcgen05_instr_descriptor(128, 12, MmaInput::BF16, false, false), Error);
}

}  // namespace
}  // namespace mgpu::core::ir

#include "tests/support/pipelined_mainloop.h"

namespace mgpu::core::ir {
namespace {

TEST(MgpuPrimitives, PipelinedMainloopCompilesWithoutSpills) {
  for (int tile_n : {128, 256}) {
    CompileResult r = compile_module(::mgpu::testing::pipelined_mainloop_mlir(tile_n, 4, 64), parse_arch("sm_90a"));
    const KernelResources& res = r.units.at(0).cubin.kernels.at("mainloop");
    EXPECT_EQ(res.spill_store_bytes, 0) << "tile_n " << tile_n << "\n" << r.units[0].cubin.log;
    EXPECT_LE(res.registers, 255);
    EXPECT_NE(r.units[0].ptx.find("setmaxnreg"), std::string::npos);
  }
}

}  // namespace
}  // namespace mgpu::core::ir
