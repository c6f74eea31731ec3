// Classic async bugs on Hopper, each as a small hand-written PTX kernel with its correct twin,
// written from the PTX ISA (not from our templates). Every faulty kernel must be reported under
// every one of 200 schedules (seeds 1..200: verify runs seeds 1 and 4 by default, so a checker
// that needs luck would show here as a count below 200), and every twin must be clean under all
// of them, with the race detector on as `verify` runs it.
//   - TMA stores (9.7.9.25, 9.7.9.26): fence.proxy.async after the issue instead of before it;
//     the fence on the issuer's side after the CTA barrier (clean); a CTA exiting while its bulk
//     store may still read shared memory; a box clipped at the tensor edge (clean).
//   - mbarrier tx-count (9.7.13.15.5): bytes beyond expect_tx landing in the next phase.
//   - a stage refilled by TMA while its ld.shared readers are not done (the race detector).
//   - distributed shared memory: a peer CTA's store with no (or a relaxed) cluster barrier.
//   - mbarrier objects (9.7.13.15.1): init on a live mbarrier, a plain store over one.
//   - wgmma.fence (9.7.15.6): accumulators written after the fence, or no fence at all.
//   - setmaxnreg (.sync.aligned over the warpgroup): executed by part of a warpgroup.
//   - mbarrier.init seen by another CTA (9.7.13.4 fence.mbarrier_init, 9.7.13.3 barrier.cluster):
//     a relaxed cluster arrive with no fence.mbarrier_init, no cluster barrier at all.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "core/emu/engines/tensor_map.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::clean;
using emu_test::count_seeds;
using emu_test::kSeeds;

const char* kHeader = ".version 8.0\n.target sm_90a\n.address_size 64\n";

// ---- TMA stores of a 16 x 16 bf16 tile (512 bytes) that 64 threads write, 8 bytes each --------

struct TmaStore : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  alignas(64) std::uint8_t map[128];
  std::uint64_t dout = 0;

  // `writers` threads write their 8 bytes; `writer_fence` follows each write; thread 0 then runs
  // `issue`, with STORE standing for the bulk tensor store of the tile.
  static std::string kernel(const std::string& name, bool writer_fence, std::string issue) {
    const std::string store = "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {%r4, %r4}], [%r3];\n";
    issue.replace(issue.find("STORE"), 5, store);
    return ".visible .entry " + name + "(.param .align 128 .b8 map[128], .param .u32 writers)\n{\n"
           "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
           "  .shared .align 128 .b8 tile[512];\n"
           "  mov.b64 %rd1, map;\n  cvta.param.u64 %rd3, %rd1;\n  ld.param.u32 %r9, [writers];\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r3, tile;\n  mov.u32 %r4, 0;\n"
           "  setp.ge.u32 %p3, %r1, %r9;\n  @%p3 bra WROTE;\n"
           "  shl.b32 %r5, %r1, 3;\n  add.u32 %r6, %r3, %r5;\n  cvt.u64.u32 %rd4, %r1;\n  st.shared.u64 [%r6], %rd4;\n" +
           std::string(writer_fence ? "  fence.proxy.async.shared::cta;\n" : "") +
           "WROTE:\n  bar.sync 0;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n" + issue + "DONE:\n  ret;\n}\n";
  }

  void SetUp() override {
    const std::string wait = "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group.read 0;\n";
    m = &dev.load(std::string(kHeader) + kernel("writer_fenced", true, "STORE" + wait) +
                  kernel("issuer_fenced", false, "  fence.proxy.async.shared::cta;\nSTORE" + wait) +
                  kernel("fence_after_issue", false, "STORE  fence.proxy.async.shared::cta;\n" + wait) +
                  kernel("no_wait", true, "STORE  cp.async.bulk.commit_group;\n"));
    dout = dev.memory().alloc(512);
  }

  // A tensor of 16 columns and `rows` rows, stored through a 16 x 16 box at (0, 0).
  LaunchResult run(const char* name, std::uint64_t seed, std::uint32_t writers = 64, std::uint64_t rows = 16) {
    std::uint64_t dims[2] = {16, rows}, strides[1] = {32};
    std::uint32_t box[2] = {16, 16}, es[2] = {1, 1};
    EXPECT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, dout, dims, strides, box, es, 0, 0, 0), "");
    LaunchConfig c;
    c.block[0] = 64;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {map, &writers};
    return dev.launch(*m, name, c, args);
  }
};

// The writers fence their own writes, or the issuing thread fences after the barrier that orders
// the writes before it: both make the generic writes visible to the async proxy (the second is
// class 12 of the battery: it used to be a false alarm, the device wanted the writer's fence).
TEST_F(TmaStore, AFenceInTheWriterOrInTheIssuerAfterTheBarrierIsClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("writer_fenced", s); }, clean, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("issuer_fenced", s); }, clean, &example), kSeeds) << example;
  auto* out = reinterpret_cast<const std::uint64_t*>(dev.memory().find(dout, 512));
  for (int t = 0; t < 64; ++t) ASSERT_EQ(out[t], static_cast<std::uint64_t>(t));
}

// The fence after the issue orders nothing the store reads: a missing proxy fence, whenever the
// scheduler performs the store (it was judged at that moment, so a late store passed).
TEST_F(TmaStore, AFenceAfterTheIssueIsReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::ProxyFence); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("fence_after_issue", s); }, found, &example), kSeeds) << example;
}

// A CTA that exits with its bulk store unretired frees the shared memory the store may still
// read (9.7.9.26: cp.async.bulk.wait_group.read is what says the source may be reused).
TEST_F(TmaStore, ExitingBeforeWaitGroupReadIsReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::ExitInFlight); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("no_wait", s); }, found, &example), kSeeds) << example;
}

// A box clipped at the tensor edge: its rows outside the tensor are never written to global
// memory, so leaving their shared bytes unwritten is no uninitialized read; one in-tensor row
// left unwritten still is.
TEST_F(TmaStore, BytesOfAClippedBoxOutsideTheTensorNeedNoData) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("writer_fenced", s, 48, 12); }, clean, &example), kSeeds) << example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::Uninitialized); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("writer_fenced", s, 44, 12); }, found, &example), kSeeds) << example;
}

// ---- TMA loads onto one mbarrier, and the mbarrier object itself -----------------------------

struct TmaLoad : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  alignas(64) std::uint8_t map[128];
  std::uint64_t din = 0, dout = 0;

  // Thread 0 runs `init` (INIT standing for mbarrier.init with count 1), then announces `expect`
  // bytes and loads the 512-byte tile twice (to tile and tile + 512); every thread waits for
  // phase 0 and copies one word of each half out.
  static std::string kernel(const std::string& name, std::string init) {
    const std::string mbinit = "  mbarrier.init.shared::cta.b64 [%r2], 1;\n";
    for (std::size_t at; (at = init.find("INIT")) != std::string::npos;) init.replace(at, 4, mbinit);
    return ".visible .entry " + name + "(.param .align 128 .b8 map[128], .param .u64 out, .param .u32 expect)\n{\n"
           "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
           "  .shared .align 128 .b8 tile[1024];\n  .shared .align 8 .u64 bar;\n"
           "  mov.b64 %rd1, map;\n  cvta.param.u64 %rd3, %rd1;\n  ld.param.u64 %rd2, [out];\n  ld.param.u32 %r9, [expect];\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n  mov.u32 %r3, tile;\n  mov.u32 %r4, 0;\n  add.u32 %r10, %r3, 512;\n"
           "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra SYNC;\n" + init +
           "SYNC:\n  bar.sync 0;\n  @%p1 bra WAIT;\n"
           "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r9;\n"
           "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd3, {%r4, %r4}], [%r2];\n"
           "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r10], [%rd3, {%r4, %r4}], [%r2];\n"
           "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n  @!%p2 bra WAIT;\n"
           "  shl.b32 %r5, %r1, 2;\n  add.u32 %r6, %r3, %r5;\n  ld.shared.u32 %r7, [%r6];\n  add.u32 %r6, %r10, %r5;\n"
           "  ld.shared.u32 %r8, [%r6];\n  add.u32 %r7, %r7, %r8;\n"
           "  mul.wide.u32 %rd4, %r1, 4;\n  add.u64 %rd5, %rd2, %rd4;\n  st.global.u32 [%rd5], %r7;\n"
           "  ret;\n}\n";
  }

  void SetUp() override {
    m = &dev.load(std::string(kHeader) + kernel("init", "INIT") + kernel("init_twice", "INIT" "INIT") +
                  kernel("inval_then_init", "INIT  mbarrier.inval.shared::cta.b64 [%r2];\nINIT") +
                  kernel("store_over_live", "INIT  mov.b64 %rd6, 0;\n  st.shared.u64 [%r2], %rd6;\n") +
                  kernel("store_then_init", "  mov.b64 %rd6, 0;\n  st.shared.u64 [%r2], %rd6;\nINIT"));
    din = dev.memory().alloc(512);
    auto* in = reinterpret_cast<std::uint16_t*>(dev.memory().find(din, 512));
    for (int i = 0; i < 256; ++i) in[i] = static_cast<std::uint16_t>(i);
    dout = dev.memory().alloc(128 * 4);
    std::uint64_t dims[2] = {16, 16}, strides[1] = {32};
    std::uint32_t box[2] = {16, 16}, es[2] = {1, 1};
    ASSERT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, din, dims, strides, box, es, 0, 0, 0), "");
  }

  LaunchResult run(const char* name, std::uint32_t expect, std::uint64_t seed) {
    LaunchConfig c;
    c.block[0] = 64;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {map, &dout, &expect};
    return dev.launch(*m, name, c, args);
  }
};

TEST_F(TmaLoad, ExpectTxCoveringBothLoadsIsClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("init", 1024, s); }, clean, &example), kSeeds) << example;
  auto* out = reinterpret_cast<const std::uint32_t*>(dev.memory().find(dout, 64 * 4));
  for (std::uint32_t t = 0; t < 64; ++t) ASSERT_EQ(out[t], 2 * (((2 * t + 1) << 16) + 2 * t)) << t;
}

// expect_tx announces one load's bytes: the phase completes on the first load, and the second
// one's bytes belong to a phase that never announced them. Whatever order the arrival and the
// two loads take, it is reported (it used to pass whenever the arrival came first): as bytes
// beyond expect_tx (mbarrier-misuse) when the second load was issued before the phase completed,
// or, when the first load landed before the second was even issued (so the second is, as far as
// the device can tell, a load of the next phase), as the unbalanced tx-count or the load still
// in flight when the CTA exits (exit-in-flight).
TEST_F(TmaLoad, BytesBeyondExpectTxAreReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) {
    return emu_test::has(r, ReportKind::BarrierMisuse) || emu_test::has(r, ReportKind::ExitInFlight);
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("init", 512, s); }, found, &example), kSeeds) << example;
}

// An mbarrier.init on a live mbarrier, or a plain store over one, is undefined (9.7.13.15.1):
// reported as what it is, not only as the deadlock it may cause. The twins invalidate first, or
// store before the init.
TEST_F(TmaLoad, InitOrStoreOverALiveMbarrierIsReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::BarrierMisuse); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("init_twice", 1024, s); }, found, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("store_over_live", 1024, s); }, found, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("inval_then_init", 1024, s); }, clean, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("store_then_init", 1024, s); }, clean, &example), kSeeds) << example;
}

// ---- wgmma.fence --------------------------------------------------------------------------

struct WgmmaFence : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;

  // 128 threads zero 8 KiB of shared memory (fenced for the async proxy), then one m64n8k16
  // wgmma accumulates into %f1..%f4: `before` runs before wgmma.fence, `after` between it and
  // the wgmma (the fence itself is left out when `fence` is false).
  static std::string kernel(const std::string& name, const std::string& before, bool fence, const std::string& after) {
    std::string zero;
    for (int i = 0; i < 8; ++i) zero += "  st.shared.u64 [%r6+" + std::to_string(8 * i) + "], %rd4;\n";
    return ".visible .entry " + name + "()\n{\n"
           "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n  .reg .f32 %f<8>;\n"
           "  .shared .align 128 .b8 sm[8192];\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r3, sm;\n  shl.b32 %r5, %r1, 6;\n  add.u32 %r6, %r3, %r5;\n  mov.b64 %rd4, 0;\n" +
           zero +
           "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
           // No-swizzle descriptors (layout 0): start >> 4, LBO 128 B, SBO 256 B; B 4 KiB further.
           "  shr.u32 %r7, %r3, 4;\n  cvt.u64.u32 %rd1, %r7;\n  or.b64 %rd1, %rd1, 68720001024;\n  add.u64 %rd2, %rd1, 256;\n"
           "  setp.eq.u32 %p1, %r1, %r1;\n" +
           before + (fence ? "  wgmma.fence.sync.aligned;\n" : "") + after +
           "  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;\n"
           "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n  ret;\n}\n";
  }

  void SetUp() override {
    std::string zero_acc;
    for (int i = 1; i <= 4; ++i) zero_acc += "  mov.f32 %f" + std::to_string(i) + ", 0f00000000;\n";
    m = &dev.load(std::string(kHeader) + kernel("fenced", zero_acc, true, "") + kernel("written_after_fence", "", true, zero_acc) +
                  kernel("no_fence", zero_acc, false, ""));
  }

  LaunchResult run(const char* name, std::uint64_t seed) {
    LaunchConfig c;
    c.block[0] = 128;
    c.seed = seed;
    c.detect_races = true;
    return dev.launch(*m, name, c, nullptr);
  }
};

TEST_F(WgmmaFence, AccumulatorsWrittenBeforeTheFenceAreClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("fenced", s); }, clean, &example), kSeeds) << example;
}

// The zeroing movs between wgmma.fence and the wgmma (what nvcc emits when the asm statements do
// not name the accumulators), or no fence at all: reported under every schedule (it used to be a
// no-op).
TEST_F(WgmmaFence, AccumulatorsWrittenAfterTheFenceOrNoFenceAreReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::WgmmaFence); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("written_after_fence", s); }, found, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("no_fence", s); }, found, &example), kSeeds) << example;
}

// ---- setmaxnreg by part of a warpgroup -------------------------------------------------------

struct SetMaxNReg : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;

  // 256 threads (two warpgroups); warps below `warps` run setmaxnreg.dec to 40.
  void SetUp() override {
    m = &dev.load(std::string(kHeader) +
                  ".visible .entry k(.param .u32 warps)\n{\n  .reg .pred %p<4>;\n  .reg .b32 %r<8>;\n"
                  "  ld.param.u32 %r3, [warps];\n  mov.u32 %r1, %tid.x;\n  shr.u32 %r2, %r1, 5;\n"
                  "  setp.ge.u32 %p1, %r2, %r3;\n  @%p1 bra SKIP;\n  setmaxnreg.dec.sync.aligned.u32 40;\nSKIP:\n  ret;\n}\n");
  }

  LaunchResult run(std::uint32_t warps, std::uint64_t seed) {
    LaunchConfig c;
    c.block[0] = 256;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {&warps};
    return dev.launch(*m, "k", c, args);
  }
};

TEST_F(SetMaxNReg, EveryWarpOfAWarpgroupOrNoneIsClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(8, s); }, clean, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(4, s); }, clean, &example), kSeeds) << example;
}

// Warps 4 and 5 of warpgroup 1 run it, 6 and 7 do not: .sync.aligned over the warpgroup is
// broken, reported under every schedule (it used to be accepted).
TEST_F(SetMaxNReg, PartOfAWarpgroupIsReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::NotConverged); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(6, s); }, found, &example), kSeeds) << example;
}

// ---- An mbarrier of CTA rank 0 used by CTA rank 1 of a 2-CTA cluster ------------------------

struct RemoteMbarrier : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;

  // Thread 0 of rank 0 initializes the mbarrier and runs `publish`; every thread then runs
  // `sync`; thread 0 of rank 1 arrives on it remotely and rank 0 waits for that phase.
  static std::string kernel(const std::string& name, const std::string& publish, const std::string& sync) {
    return ".visible .entry " + name + "()\n{\n  .reg .pred %p<6>;\n  .reg .b32 %r<16>;\n  .shared .align 8 .u64 bar;\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n  mov.u32 %r3, %cluster_ctarank;\n"
           "  setp.eq.u32 %p1, %r3, 0;\n  setp.eq.u32 %p2, %r1, 0;\n  and.pred %p3, %p1, %p2;\n  @!%p3 bra PUB;\n"
           "  mbarrier.init.shared::cta.b64 [%r2], 1;\n" + publish + "PUB:\n" + sync +
           "  @%p1 bra WAIT;\n  @!%p2 bra DONE;\n  mapa.shared::cluster.u32 %r5, %r2, 0;\n"
           "  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r5];\n  bra DONE;\n"
           "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r2], 0;\n  @!%p4 bra WAIT;\nDONE:\n  ret;\n}\n";
  }

  void SetUp() override {
    const std::string fence = "  fence.mbarrier_init.release.cluster;\n";
    const std::string relaxed = "  barrier.cluster.arrive.relaxed.aligned;\n  barrier.cluster.wait.aligned;\n";
    const std::string release = "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n";
    m = &dev.load(std::string(kHeader) + kernel("fenced_relaxed", fence, relaxed) + kernel("release_arrive", "", release) +
                  kernel("unfenced_relaxed", "", relaxed) + kernel("no_cluster_barrier", fence, ""));
  }

  LaunchResult run(const char* name, std::uint64_t seed) {
    LaunchConfig c;
    c.grid[0] = 2;
    c.cluster[0] = 2;
    c.block[0] = 32;
    c.seed = seed;
    c.detect_races = true;
    return dev.launch(*m, name, c, nullptr);
  }
};

// fence.mbarrier_init.release.cluster before a relaxed cluster arrive, or a releasing arrive,
// publishes the init (PTX ISA 9.7.13.4); the remote arrival after the cluster wait is then fine.
TEST_F(RemoteMbarrier, AnInitPublishedToTheClusterIsClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("fenced_relaxed", s); }, clean, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("release_arrive", s); }, clean, &example), kSeeds) << example;
}

// A relaxed arrive with no fence.mbarrier_init publishes nothing, and without the cluster
// barrier the other CTA may arrive before the init: both reported under every schedule (the
// first used to pass: fences were no-ops and relaxed arrives released).
TEST_F(RemoteMbarrier, AnUnpublishedInitUsedByAnotherCtaIsReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::BarrierMisuse); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("unfenced_relaxed", s); }, found, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("no_cluster_barrier", s); }, found, &example), kSeeds) << example;
}

// ---- A stage refilled by TMA while its ld.shared readers may not be done ----------------------

struct StageRefill : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  alignas(64) std::uint8_t map[128];
  std::uint64_t din = 0, dout = 0;

  // One 512-byte stage, loaded twice by thread 0. `full` completes when a load landed; `empty`
  // when all 64 threads released the stage. Each thread reads its word of the first load, arrives
  // on `empty` (before the read when `early`), and reads its word of the second load.
  static std::string kernel(const std::string& name, bool early) {
    const std::string read1 = "  ld.shared.u32 %r7, [%r6];\n", release = "  mbarrier.arrive.shared::cta.b64 _, [%r11];\n";
    const std::string load = "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 512;\n"
                             "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd3, {%r4, %r4}], [%r2];\n";
    return ".visible .entry " + name + "(.param .align 128 .b8 map[128], .param .u64 out)\n{\n"
           "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
           "  .shared .align 128 .b8 stage[512];\n  .shared .align 8 .u64 full;\n  .shared .align 8 .u64 empty;\n"
           "  mov.b64 %rd1, map;\n  cvta.param.u64 %rd3, %rd1;\n  ld.param.u64 %rd2, [out];\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, full;\n  mov.u32 %r11, empty;\n  mov.u32 %r3, stage;\n  mov.u32 %r4, 0;\n"
           "  shl.b32 %r5, %r1, 2;\n  add.u32 %r6, %r3, %r5;\n"
           "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra SYNC;\n"
           "  mbarrier.init.shared::cta.b64 [%r2], 1;\n  mbarrier.init.shared::cta.b64 [%r11], 64;\n"
           "SYNC:\n  bar.sync 0;\n  @%p1 bra WAIT0;\n" + load +
           "WAIT0:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n  @!%p2 bra WAIT0;\n" +
           (early ? release + read1 : read1 + release) +
           "  @%p1 bra WAIT1;\nEMPTY:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r11], 0;\n  @!%p3 bra EMPTY;\n" + load +
           "WAIT1:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 1;\n  @!%p2 bra WAIT1;\n"
           "  ld.shared.u32 %r8, [%r6];\n  add.u32 %r7, %r7, %r8;\n"
           "  mul.wide.u32 %rd4, %r1, 4;\n  add.u64 %rd5, %rd2, %rd4;\n  st.global.u32 [%rd5], %r7;\n  ret;\n}\n";
  }

  void SetUp() override {
    m = &dev.load(std::string(kHeader) + kernel("release_after_read", false) + kernel("release_before_read", true));
    din = dev.memory().alloc(512);
    auto* in = reinterpret_cast<std::uint16_t*>(dev.memory().find(din, 512));
    for (int i = 0; i < 256; ++i) in[i] = static_cast<std::uint16_t>(i);
    dout = dev.memory().alloc(64 * 4);
    std::uint64_t dims[2] = {16, 16}, strides[1] = {32};
    std::uint32_t box[2] = {16, 16}, es[2] = {1, 1};
    ASSERT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, din, dims, strides, box, es, 0, 0, 0), "");
  }

  LaunchResult run(const char* name, std::uint64_t seed) {
    LaunchConfig c;
    c.block[0] = 64;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {map, &dout};
    return dev.launch(*m, name, c, args);
  }
};

TEST_F(StageRefill, ReleasingTheStageAfterReadingItIsClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("release_after_read", s); }, clean, &example), kSeeds) << example;
  auto* out = reinterpret_cast<const std::uint32_t*>(dev.memory().find(dout, 64 * 4));
  for (std::uint32_t t = 0; t < 64; ++t) ASSERT_EQ(out[t], 2 * (((2 * t + 1) << 16) + 2 * t)) << t;
}

// Each thread releases the stage and then reads it: the producer may refill it under the read
// (write-after-read), or the read may see the second load's bytes without waiting for them. The
// race detector orders the landing after the load's issue only, so either way it is a race,
// under every schedule (ordinary reads were never compared with TMA writes before).
TEST_F(StageRefill, ReleasingTheStageBeforeReadingItIsARaceUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::Race); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("release_before_read", s); }, found, &example), kSeeds) << example;
}

// ---- Distributed shared memory: CTA rank 1 writes CTA rank 0's shared memory -------------------

struct Dsmem : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::uint64_t dout = 0;

  // Each thread of rank 1 stores its index into its word of rank 0's buffer (mapa +
  // st.shared::cluster); every thread runs `sync`; rank 0's threads then read their word.
  static std::string kernel(const std::string& name, const std::string& sync) {
    return ".visible .entry " + name + "(.param .u64 out)\n{\n  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
           "  .shared .align 4 .u32 buf[32];\n  ld.param.u64 %rd2, [out];\n"
           "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, buf;\n  shl.b32 %r4, %r1, 2;\n  add.u32 %r2, %r2, %r4;\n"
           "  mov.u32 %r3, %cluster_ctarank;\n  setp.eq.u32 %p1, %r3, 1;\n  @!%p1 bra SYNC;\n"
           "  mapa.shared::cluster.u32 %r5, %r2, 0;\n  st.shared::cluster.u32 [%r5], %r1;\nSYNC:\n" + sync +
           "  @%p1 bra DONE;\n  ld.shared.u32 %r7, [%r2];\n  mul.wide.u32 %rd4, %r1, 4;\n  add.u64 %rd5, %rd2, %rd4;\n"
           "  st.global.u32 [%rd5], %r7;\nDONE:\n  ret;\n}\n";
  }

  void SetUp() override {
    m = &dev.load(std::string(kHeader) + kernel("cluster_barrier", "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n") +
                  kernel("relaxed_arrive", "  barrier.cluster.arrive.relaxed.aligned;\n  barrier.cluster.wait.aligned;\n") +
                  kernel("no_barrier", ""));
    dout = dev.memory().alloc(32 * 4);
  }

  LaunchResult run(const char* name, std::uint64_t seed) {
    LaunchConfig c;
    c.grid[0] = 2;
    c.cluster[0] = 2;
    c.block[0] = 32;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {&dout};
    return dev.launch(*m, name, c, args);
  }
};

TEST_F(Dsmem, AStoreIntoAPeerOrderedByTheClusterBarrierIsClean) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("cluster_barrier", s); }, clean, &example), kSeeds) << example;
  auto* out = reinterpret_cast<const std::uint32_t*>(dev.memory().find(dout, 32 * 4));
  for (std::uint32_t t = 0; t < 32; ++t) ASSERT_EQ(out[t], t);
}

// No cluster barrier, or one whose arrive is .relaxed (no release, PTX ISA 9.7.13.3): the peer's
// store and the owner's read are unordered, a race under every schedule (the detector used to be
// per CTA and saw neither the peer's store nor the cluster barrier's ordering).
TEST_F(Dsmem, AStoreIntoAPeerWithNothingOrderingItIsARaceUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) { return emu_test::has(r, ReportKind::Race); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("no_barrier", s); }, found, &example), kSeeds) << example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("relaxed_arrive", s); }, found, &example), kSeeds) << example;
}

}  // namespace
}  // namespace mgpu::emu
