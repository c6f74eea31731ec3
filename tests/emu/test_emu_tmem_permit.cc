// The tensor-memory allocation permit (issue 31, class 9), as hand-written sm_100a kernels: each
// faulty kernel must be reported under every one of seeds 1..200 and each correct twin must be
// clean under all of them, with the race detector on as `verify` runs it.
//
// What the PTX ISA says (9.7.16.7.1 "tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit",
// ISA 8.7 numbering; 9.7.18.7.1 in ISA 9.x):
//   - "tcgen05.alloc is a blocking instruction ... The tcgen05.alloc blocks if the requested
//     amount of Tensor Memory is not available and unblocks as soon as the requested amount of
//     Tensor Memory becomes available for allocation."
//   - "Instruction tcgen05.relinquish_alloc_permit specifies that the CTA of the executing thread
//     is relinquishing the right to allocate Tensor Memory. So, it is illegal for a CTA to perform
//     tcgen05.alloc after any of its constituent threads execute tcgen05.relinquish_alloc_permit."
//   - Its example 1 allocates, deallocates, and relinquishes last; nothing obliges a CTA to
//     relinquish at all.
//   - 9.7.16.5 "Issue Granularity": .alloc, .dealloc and .relinquish_alloc_permit with
//     .cta_group::2 are performed collectively by one warp of each CTA of the pair, "the first
//     warp to perform the operation could block until the second warp in the Peer CTA also
//     performs the operation".
// The ISA does not say in so many words what holding the right does to the other CTAs of the SM.
// CUTLASS does ("Release the right to allocate before deallocations so that the next CTA can
// rasterize", sm100 GEMM kernels and cute's Blackwell tutorial), and so does nvFuser ("because we
// are relinquishing the right to allocate, CTAs are no longer serialized", NVIDIA/Fuser#3795):
// while a CTA of an SM holds the permit, no other CTA there allocates. The device models that
// (engines/tmem.h): the permit of each SM is held by the CTA that allocated there until it
// relinquishes or exits, and a cluster takes the permits of all its SMs at once (its CTAs are
// launched together), so a waiting allocation ends when the holder gives it up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::clean;
using emu_test::count_seeds;
using emu_test::kSeeds;

using emu_test::all;
using emu_test::has;

bool contains(const LaunchResult& r, const std::string& text) { return all(r).find(text) != std::string::npos; }

const char* kHeader = ".version 8.7\n.target sm_100a\n.address_size 64\n";

// `early` selects where the CTA relinquishes its permit: 1 right after its allocation (as
// CUTLASS's and Triton's kernels that allocate once do), 0 after its deallocation at the end (the
// ISA's example 1 order), 2 never.
//
// grid_wait: each CTA (one warp) allocates 128 columns, then waits at a grid-wide barrier (a
// counter in global memory) for every CTA of the grid to have done so, then frees its columns.
// The barrier needs the CTAs to run at once; so it needs the permit to pass on before it.
//
// two_allocs: each CTA allocates 256 columns, then 256 more (a second buffer: the ISA allows more
// allocations as long as the count does not grow), uses both, frees both. With `early` = 1 it
// relinquishes between the two allocations: the second is an allocation after the relinquish.
//
// tickets: each CTA takes a ticket (a global counter) right after its allocation and another right
// before it exits, written to out[2 * ctaid] and out[2 * ctaid + 1].
//
// stuck: each CTA allocates 32 columns, keeps its permit, and waits on an mbarrier that no one
// ever arrives on (its own bug): the other CTA of the SM waits for the permit meanwhile.
std::string kernels() {
  const std::string relinquish = "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n";
  const std::string sync = "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n";
  return std::string(kHeader) +
         ".visible .entry grid_wait(.param .u64 pcount, .param .u32 early)\n{\n"
         "  .shared .align 16 .b8 slot[16];\n  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<4>;\n"
         "  ld.param.u64 %rd1, [pcount];\n  ld.param.u32 %r1, [early];\n"
         "  setp.eq.u32 %p1, %r1, 1;\n  setp.eq.u32 %p4, %r1, 0;\n"
         "  mov.u32 %r2, %tid.x;\n  setp.eq.u32 %p2, %r2, 0;\n  mov.u32 %r4, slot;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], 128;\n"
         "  @%p1 " + relinquish +
         "  @%p2 red.release.gpu.global.add.u32 [%rd1], 1;\n"
         "SPIN:\n  ld.acquire.gpu.global.u32 %r5, [%rd1];\n  setp.lt.u32 %p3, %r5, 2;\n  @%p3 bra SPIN;\n" + sync +
         "  ld.shared.b32 %r6, [%r4];\n"
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r6, 128;\n"
         "  @%p4 " + relinquish +
         "  ret;\n}\n"
         ".visible .entry two_allocs(.param .u64 pout, .param .u32 early)\n{\n"
         "  .shared .align 16 .b8 slot[16];\n  .reg .pred %p<8>;\n  .reg .b32 %r<32>;\n  .reg .b64 %rd<8>;\n"
         "  ld.param.u64 %rd1, [pout];\n  ld.param.u32 %r1, [early];\n"
         "  setp.eq.u32 %p1, %r1, 1;\n  setp.eq.u32 %p4, %r1, 0;\n"
         "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, %ctaid.x;\n  mov.u32 %r4, slot;\n  add.u32 %r7, %r4, 4;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], 256;\n"
         "  @%p1 " + relinquish +
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r7], 256;\n"
         "  @%p4 " + relinquish + sync +
         "  ld.shared.b32 %r5, [%r4];\n  ld.shared.b32 %r6, [%r7];\n"
         // Lane t of each allocation's first column gets 1000 * ctaid + t (second: + 500), read back.
         "  mad.lo.u32 %r10, %r3, 1000, %r2;\n  add.u32 %r11, %r10, 500;\n"
         "  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r5], {%r10};\n"
         "  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r6], {%r11};\n"
         "  tcgen05.wait::st.sync.aligned;\n"
         "  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r12}, [%r5];\n"
         "  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r13}, [%r6];\n"
         "  tcgen05.wait::ld.sync.aligned;\n"
         "  shl.b32 %r14, %r3, 5;\n  add.u32 %r14, %r14, %r2;\n  mul.wide.u32 %rd2, %r14, 8;\n  add.s64 %rd3, %rd1, %rd2;\n"
         "  st.global.v2.u32 [%rd3], {%r12, %r13};\n" + sync +
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r5, 256;\n"
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r6, 256;\n"
         "  ret;\n}\n"
         ".visible .entry tickets(.param .u64 pseq, .param .u64 pout, .param .u32 early)\n{\n"
         "  .shared .align 16 .b8 slot[16];\n  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
         "  ld.param.u64 %rd1, [pseq];\n  ld.param.u64 %rd2, [pout];\n  ld.param.u32 %r1, [early];\n"
         "  setp.eq.u32 %p1, %r1, 1;\n  setp.eq.u32 %p4, %r1, 0;\n"
         "  mov.u32 %r2, %tid.x;\n  setp.eq.u32 %p2, %r2, 0;\n  mov.u32 %r3, %ctaid.x;\n  mov.u32 %r4, slot;\n"
         "  mul.wide.u32 %rd3, %r3, 8;\n  add.s64 %rd4, %rd2, %rd3;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], 32;\n"
         "  @%p1 " + relinquish +
         "  @%p2 atom.global.add.u32 %r5, [%rd1], 1;\n  @%p2 st.global.u32 [%rd4], %r5;\n" + sync +
         "  ld.shared.b32 %r6, [%r4];\n"
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r6, 32;\n"
         "  @%p4 " + relinquish +
         "  @%p2 atom.global.add.u32 %r7, [%rd1], 1;\n  @%p2 st.global.u32 [%rd4+4], %r7;\n"
         "  ret;\n}\n"
         ".visible .entry stuck()\n{\n"
         "  .shared .align 16 .b8 slot[16];\n  .shared .align 8 .b64 bar;\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n"
         "  mov.u32 %r2, %tid.x;\n  setp.eq.u32 %p2, %r2, 0;\n  mov.u32 %r4, slot;\n  mov.u32 %r8, bar;\n"
         "  @%p2 mbarrier.init.shared.b64 [%r8], 1;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], 32;\n" + sync +
         "WAITL:\n  mbarrier.try_wait.parity.shared.b64 %p3, [%r8], 0;\n  @!%p3 bra WAITL;\n"
         "  ld.shared.b32 %r6, [%r4];\n"
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r6, 32;\n"
         "  ret;\n}\n";
}

// The PTX line of the stuck kernel's tcgen05.alloc.
int stuck_alloc_line() {
  const std::string k = kernels();
  const std::size_t at = k.find("tcgen05.alloc", k.find(".visible .entry stuck"));
  return 1 + static_cast<int>(std::count(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// Two CTAs of one warp each, resident on one SM together (they share its tensor memory and its
// allocation permit).
struct TmemPermit : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::uint64_t dcount = 0, dout = 0;
  void SetUp() override {
    m = &dev.load(kernels());
    dcount = dev.memory().alloc(8);
    dout = dev.memory().alloc(2 * 32 * 8);
  }
  LaunchConfig config(std::uint64_t seed) const {
    LaunchConfig c;
    c.grid[0] = 2;
    c.block[0] = 32;
    c.resident_ctas = 2;
    c.seed = seed;
    c.detect_races = true;
    c.step_limit = 10'000;  // the kernels need some 100 each; a CTA spinning for ever ends in a few ms
    return c;
  }
  LaunchResult grid_wait(std::uint32_t early, std::uint64_t seed) {
    std::memset(dev.memory().find(dcount, 8), 0, 8);
    void* args[] = {&dcount, &early};
    return dev.launch(*m, "grid_wait", config(seed), args);
  }
  LaunchResult two_allocs(std::uint32_t early, std::uint64_t seed) {
    std::memset(dev.memory().find(dout, 2 * 32 * 8), 0xFF, 2 * 32 * 8);
    void* args[] = {&dout, &early};
    return dev.launch(*m, "two_allocs", config(seed), args);
  }
  LaunchResult tickets(std::uint32_t early, std::uint64_t seed) {
    std::memset(dev.memory().find(dcount, 8), 0, 8);
    std::memset(dev.memory().find(dout, 16), 0xFF, 16);
    void* args[] = {&dcount, &dout, &early};
    return dev.launch(*m, "tickets", config(seed), args);
  }
  const std::uint32_t* out() { return reinterpret_cast<const std::uint32_t*>(dev.memory().find(dout, 2 * 32 * 8)); }
};

// ---- faulty kernels and their twins, under seeds 1..200 ---------------------------------------

// A CTA that keeps its permit while it waits for another CTA of its SM: that CTA never gets to
// allocate, so the wait never ends. The hang is a spin (a global-memory barrier, which the device
// cannot tell from progress), so it ends at the step limit, and the finding says which lane waits
// in tcgen05.alloc for the permit and which CTA holds it. The twin relinquishes right after its
// allocation, as CUTLASS's "release_allocation_lock" does: clean under every schedule.
TEST_F(TmemPermit, APermitKeptAcrossAWaitForTheOtherCtaHangsUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) {
    return !r.ok && r.reports[0].kind == ReportKind::StepLimit &&
           r.reports[0].message.find("in tcgen05.alloc for the tensor memory allocation permit of its SM, held by CTA (") !=
               std::string::npos &&
           r.reports[0].message.find("which has not executed tcgen05.relinquish_alloc_permit") != std::string::npos;
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return grid_wait(0, s); }, found, &example), kSeeds) << example;
  example.clear();
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return grid_wait(1, s); }, clean, &example), kSeeds) << example;
}

// 9.7.16.7.1: "it is illegal for a CTA to perform tcgen05.alloc after any of its constituent
// threads execute tcgen05.relinquish_alloc_permit": the second allocation after the relinquish
// is reported, under every schedule. The twin relinquishes after its last allocation: clean, and
// the permit keeps the other CTA from taking columns between its two allocations (without the
// permit, each CTA getting 256 columns and waiting for 256 more is a deadlock).
TEST_F(TmemPermit, AnAllocationAfterTheRelinquishIsReportedUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) {
    return has(r, ReportKind::TmemMisuse) && contains(r, "tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return two_allocs(1, s); }, found, &example), kSeeds) << example;
  example.clear();
  auto right = [&](const LaunchResult& r) {
    if (!clean(r)) return false;
    for (int cta = 0; cta < 2; ++cta)
      for (int t = 0; t < 32; ++t) {
        const std::uint32_t* v = out() + 2 * (32 * cta + t);
        if (v[0] != 1000u * cta + t || v[1] != 1000u * cta + t + 500) return false;
      }
    return true;
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return two_allocs(0, s); }, right, &example), kSeeds) << example;
}

// ---- unit tests of the rule --------------------------------------------------------------------

// Relinquishing is not required (the ISA's text has no such rule): a CTA that never does keeps
// the permit until it exits, and the other CTA of the SM allocates only then -- each CTA's two
// tickets (after its allocation, before its exit) are consecutive.
TEST_F(TmemPermit, AHolderThatNeverRelinquishesKeepsThePermitUntilItExits) {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    LaunchResult r = tickets(2, seed);
    ASSERT_TRUE(clean(r)) << "seed " << seed << "\n" << all(r);
    const std::uint32_t* t = out();
    std::set<std::uint32_t> pairs = {t[0] * 10 + t[1], t[2] * 10 + t[3]};
    EXPECT_EQ(pairs, (std::set<std::uint32_t>{1, 23})) << "seed " << seed << ": " << t[0] << " " << t[1] << " " << t[2] << " " << t[3];
  }
}

// Relinquished early, the permit passes on while the holder still runs: under some schedules the
// other CTA allocates before the first one's second ticket; clean under all of them.
TEST_F(TmemPermit, ARelinquishedPermitPassesToTheOtherCtaAtOnce) {
  int overlapped = 0;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    LaunchResult r = tickets(1, seed);
    ASSERT_TRUE(clean(r)) << "seed " << seed << "\n" << all(r);
    const std::uint32_t* t = out();
    overlapped += !(t[1] == t[0] + 1 && t[3] == t[2] + 1);
  }
  EXPECT_GT(overlapped, 0);
}

// When every thread waits, the deadlock names the permit, its holder and where it took it.
TEST_F(TmemPermit, ADeadlockNamesThePermitAndItsHolder) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    void* args[] = {nullptr};
    LaunchResult r = dev.launch(*m, "stuck", config(seed), args);
    ASSERT_FALSE(r.ok) << all(r);
    ASSERT_EQ(r.reports[0].kind, ReportKind::Deadlock) << all(r);
    EXPECT_NE(r.reports[0].message.find("in tcgen05.alloc for the tensor memory allocation permit of its SM, held by CTA ("),
              std::string::npos)
        << all(r);
    EXPECT_NE(r.reports[0].message.find("(it took the permit at its tcgen05.alloc at PTX line " + std::to_string(stuck_alloc_line()) + ")"),
              std::string::npos)
        << all(r);
  }
}

// ---- clusters: the permits of all a cluster's SMs go together ---------------------------------

// Two clusters of 2 CTAs (one warp each) share SMs 0 and 1. `pair` 0: each CTA allocates 512
// columns (.cta_group::1), meets its peer at barrier.cluster, frees them and relinquishes last.
// Were the permits taken SM by SM, one cluster could hold SM 0's and the other SM 1's, each
// waiting at barrier.cluster for a peer that waits for the other's permit; a cluster is launched
// as a whole, so it holds both or none. `pair` 1: the same with .cta_group::2 (256 columns in
// each CTA, relinquished collectively right after the allocation); 2: only the even CTA of the
// pair relinquishes (9.7.16.5: both must, collectively).
std::string cluster_kernel() {
  return std::string(kHeader) +
         ".visible .entry clusters(.param .u32 pair)\n{\n"
         "  .shared .align 16 .b8 slot[16];\n  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n"
         "  ld.param.u32 %r1, [pair];\n  setp.ne.u32 %p1, %r1, 0;\n  setp.eq.u32 %p3, %r1, 2;\n"
         "  mov.u32 %r3, %cluster_ctarank;\n  setp.ne.u32 %p4, %r3, 0;\n  and.pred %p5, %p3, %p4;\n"
         "  mov.u32 %r4, slot;\n"
         "  @%p1 bra PAIR;\n"
         "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r4], 512;\n"
         "  tcgen05.fence::before_thread_sync;\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
         "  tcgen05.fence::after_thread_sync;\n"
         "  ld.shared.b32 %r5, [%r4];\n"
         "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r5, 512;\n"
         "  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
         "  ret;\n"
         "PAIR:\n"
         "  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r4], 256;\n"
         "  @!%p5 tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n"
         "  tcgen05.fence::before_thread_sync;\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
         "  tcgen05.fence::after_thread_sync;\n"
         "  ld.shared.b32 %r5, [%r4];\n"
         "  tcgen05.fence::before_thread_sync;\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
         "  tcgen05.fence::after_thread_sync;\n"
         "  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r5, 256;\n"
         "  ret;\n}\n";
}

struct TmemPermitClusters : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  void SetUp() override { m = &dev.load(cluster_kernel()); }
  LaunchResult run(std::uint32_t pair, std::uint64_t seed) {
    LaunchConfig c;
    c.grid[0] = 4;
    c.cluster[0] = 2;
    c.block[0] = 32;
    c.resident_ctas = 2;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {&pair};
    return dev.launch(*m, "clusters", c, args);
  }
};

TEST_F(TmemPermitClusters, CoResidentClustersTakeTurnsAndNeverDeadlock) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(0, s); }, clean, &example), kSeeds) << example;
  example.clear();
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(1, s); }, clean, &example), kSeeds) << example;
}

TEST_F(TmemPermitClusters, ARelinquishOfOneCtaOfThePairWaitsForThePeersUnderEverySchedule) {
  std::string example;
  auto found = [](const LaunchResult& r) {
    return !r.ok && r.reports[0].kind == ReportKind::Deadlock &&
           r.reports[0].message.find("in tcgen05.relinquish_alloc_permit.cta_group::2 for a warp of the peer CTA rank 1 to perform it too") !=
               std::string::npos;
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(2, s); }, found, &example), kSeeds) << example;
}

}  // namespace
}  // namespace mgpu::emu
