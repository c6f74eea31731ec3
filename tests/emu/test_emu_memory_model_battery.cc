// An independent battery for the virtual device's global-memory checking by the PTX memory
// consistency model (core/emu/check/memory_model.h), written from the PTX ISA -- not from the
// checker -- before split-K / stream-K kernels lean on it. Each pattern is a pair of PTX kernels:
// a faulty one the checker must flag (with the finding kind the ISA implies) and its correct twin
// it must pass, under seeds 1..200 with race detection on (as `verify` runs it). The ISA text
// each case rests on (PTX ISA chapter 8, "Memory Consistency Model"):
//   - 8.4 Operation types: ld/st are weak unless .relaxed/.acquire/.release/.volatile/.mmio; atom
//     and red are strong; "write operation: ... atomic operations if they result in a write";
//     8.4.2 .volatile is "a relaxed memory operation with system-scope".
//   - 8.5 Scope ("the warp is not a scope"); 8.7 Morally strong operations; 8.7.1 "Two
//     conflicting memory operations are said to be in a data-race if they are not related in
//     causality order and they are not morally strong".
//   - 8.8 Release and Acquire Patterns; 8.9.2 Observation order (through atomic RMWs); 8.9.3
//     Fence-SC order; 8.9.4 Memory synchronization ("the first operation in X and the last
//     operation in Y are morally strong"); 8.9.5 Causality order, including "X precedes Z in
//     observation order, and Z precedes Y in proxy-preserved base causality order".
//   - bar.warp.sync: "bar.warp.sync also guarantee memory ordering among threads participating
//     in barrier" -- shfl.sync / vote.sync / elect.sync say no such thing, and 8.9.4 lists no
//     warp collective among the synchronizing operations.
//   - 8.1: "The memory consistency model does not apply to texture (including ld.global.nc)".
//   - cp.async.bulk / Async Proxy: "fence.proxy.async should be used to synchronize memory
//     between generic proxy and the async proxy".
//
// Groups: message passing (MessagePassing), the split-K per-tile atomic ticket (Ticket), the
// CUDA sample threadFenceReduction (ThreadFenceReduction), an atom.cas spin lock between CTAs
// (SpinLock), TMA reads of generic stores (TmaOfGenericStores), accesses the ISA makes
// race-free (NoFalseAlarm), and races the checker cannot see (Gaps).
// Tests named `Found_...` are the gaps and false alarms this battery found in the checker
// (2026-11-26: warp collectives ordering memory, ld.global.nc, observation order, failed CAS,
// "st.release; st.relaxed" release patterns, one remembered write per byte, lanes of one atom
// taken in order); each states the ISA text that decides it. The checker was fixed, and they pass.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "core/emu/engines/tensor_map.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::all;
using emu_test::clean;
using emu_test::count_seeds;
using emu_test::has;
using emu_test::kSeeds;

const char* kHeader = ".version 8.0\n.target sm_90a\n.address_size 64\n";
const char* kWarpSync = "  bar.warp.sync 0xffffffff;\n";

std::string sub(std::string s, const std::vector<std::pair<std::string, std::string>>& with) {
  for (const auto& [what, by] : with)
    for (std::size_t at; (at = s.find(what)) != std::string::npos;) s.replace(at, what.size(), by);
  return s;
}

bool message_has(const LaunchResult& r, ReportKind k, const std::string& text) {
  for (const auto& x : r.reports)
    if (x.kind == k && x.message.find(text) != std::string::npos) return true;
  return false;
}

// A finding of kind `k` whose conflicting global address lies in [lo, hi).
bool finding_on(const LaunchResult& r, std::uint64_t lo, std::uint64_t hi, ReportKind k = ReportKind::Race) {
  for (const auto& x : r.reports) {
    if (x.kind != k) continue;
    const std::string key = "(global address ";
    const std::size_t at = x.message.find(key);
    if (at == std::string::npos) continue;
    const std::uint64_t a = std::stoull(x.message.substr(at + key.size()), nullptr, 16);
    if (a >= lo && a < hi) return true;
  }
  return false;
}

// A battery fixture: a device, its buffers, and a launch of one kernel under a seed.
struct Battery : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;

  std::uint64_t buffer(std::size_t bytes) { return dev.memory().alloc(bytes); }
  void fill(std::uint64_t a, std::size_t bytes, int v) { std::memset(dev.memory().find(a, bytes), v, bytes); }
  template <typename T>
  T at(std::uint64_t a, std::size_t i) {
    T v;
    std::memcpy(&v, dev.memory().find(a + i * sizeof(T), sizeof(T)), sizeof(T));
    return v;
  }
  LaunchResult launch(const std::string& name, std::uint32_t grid, std::uint32_t block, std::uint64_t seed, void** args,
                      std::uint32_t cluster = 1, std::uint64_t step_limit = 200'000) {
    LaunchConfig c;
    c.grid[0] = grid;
    c.block[0] = block;
    c.cluster[0] = cluster;
    c.seed = seed;
    c.detect_races = true;
    c.step_limit = step_limit;
    return dev.launch(*m, name, c, args);
  }
  // Seeds (of kSeeds) under which `found` holds; the first that misses is described in `example`.
  int seeds(const std::function<LaunchResult(std::uint64_t)>& run, const std::function<bool(const LaunchResult&)>& found,
            std::string* example) {
    return count_seeds(run, found, example);
  }
};

// ==== Message passing between CTAs ===========================================================
//
// One warp per CTA. The writer is the LAST CTA of the grid and the reader CTA 0 -- so the reader
// is dispatched first and spins on a CTA launched after it (co-residency: it must not hang).
// Writer: every lane stores 100 + lane to data[lane]; WWARP; lane 0 runs PUB (publishes flag = 1
// from %r7). Reader: lane 0 spins on ACQ (the flag into %r5) until 1, then AFTER; every lane runs
// RWARP, reads data[lane] with a weak load and copies it to out[lane]. EXTRA runs first in every
// thread (e.g. an unrelated atomic, to make a weak-flag kernel co-resident).
struct Mp {
  std::string pub, acq, after = "", wwarp = kWarpSync, rwarp = kWarpSync, extra = "";
};

std::string mp_kernel(const std::string& name, const Mp& k) {
  return sub(".visible .entry NAME(.param .u64 data, .param .u64 flag, .param .u64 out)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n"
             "  ld.param.u64 %rd1, [data];\n  ld.param.u64 %rd2, [flag];\n  ld.param.u64 %rd3, [out];\n"
             "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %nctaid.x;\n  add.u32 %r4, %r3, -1;\n"
             "  mul.wide.u32 %rd4, %r1, 4;\n  add.u64 %rd5, %rd1, %rd4;\n  add.u64 %rd6, %rd3, %rd4;\n"
             "  setp.eq.u32 %p1, %r1, 0;\n  mov.u32 %r7, 1;\n  mov.u32 %r5, 0;\n"
             "EXTRA"
             "  setp.eq.u32 %p2, %r2, %r4;\n  @%p2 bra WRITER;\n  setp.ne.u32 %p3, %r2, 0;\n  @%p3 bra DONE;\n"
             "  @!%p1 bra RSYNC;\n"
             "RSPIN:\nACQ  setp.ne.u32 %p4, %r5, 1;\n  @%p4 bra RSPIN;\nAFTER"
             "RSYNC:\nRWARP  ld.global.u32 %r6, [%rd5];\n  st.global.u32 [%rd6], %r6;\n  bra DONE;\n"
             "WRITER:\n  add.u32 %r8, %r1, 100;\n  st.global.u32 [%rd5], %r8;\nWWARP  @!%p1 bra DONE;\nPUB"
             "DONE:\n  ret;\n}\n",
             {{"NAME", name}, {"EXTRA", k.extra}, {"ACQ", k.acq}, {"AFTER", k.after}, {"RWARP", k.rwarp}, {"WWARP", k.wwarp},
              {"PUB", k.pub}});
}

const char* kStRelease = "  st.release.gpu.global.u32 [%rd2], %r7;\n";
const char* kLdAcquire = "  ld.acquire.gpu.global.u32 %r5, [%rd2];\n";
const char* kStRelaxed = "  st.relaxed.gpu.global.u32 [%rd2], %r7;\n";
const char* kLdRelaxed = "  ld.relaxed.gpu.global.u32 %r5, [%rd2];\n";
const char* kFenceGpu = "  fence.acq_rel.gpu;\n";

struct MessagePassing : Battery {
  std::uint64_t data = 0, flag = 0, out = 0;

  void SetUp() override {
    auto mk = [](const char* n, Mp k) { return mp_kernel(n, k); };
    const std::string shfl = "  shfl.sync.idx.b32 %r9, %r5, 0, 0x1f, 0xffffffff;\n";
    m = &dev.load(std::string(kHeader) +
                  // faulty: a weak flag (8.4: no synchronization at all; the flag itself races)
                  mk("weak", {"  st.global.u32 [%rd2], %r7;\n", "  ld.global.u32 %r5, [%rd2];\n"}) +
                  mk("weak_coresident", {"  st.global.u32 [%rd2], %r7;\n", "  ld.global.u32 %r5, [%rd2];\n", "", kWarpSync, kWarpSync,
                                         "  red.relaxed.gpu.global.add.u32 [%rd2+4], 1;\n"}) +
                  // faulty: a relaxed flag and no fence: the flag is morally strong, the data is not ordered
                  mk("relaxed", {kStRelaxed, kLdRelaxed}) +
                  // correct: a release store observed by an acquire load (8.8 first forms)
                  mk("release_acquire", {kStRelease, kLdAcquire}) +
                  // correct: the same through generic addresses (as libcu++ emits them)
                  mk("release_acquire_generic", {"  st.release.gpu.u32 [%rd2], %r7;\n", "  ld.acquire.gpu.u32 %r5, [%rd2];\n"}) +
                  // correct: .sys on one side includes the other thread too
                  mk("release_sys_acquire_gpu", {"  st.release.sys.global.u32 [%rd2], %r7;\n", kLdAcquire}) +
                  // correct: fence.acq_rel + relaxed flag on both sides (8.8 third forms)
                  mk("fences", {std::string(kFenceGpu) + kStRelaxed, kLdRelaxed, kFenceGpu}) +
                  // faulty: the reader's fence is BEFORE its read, none after: no acquire pattern
                  mk("fence_before_read", {std::string(kFenceGpu) + kStRelaxed, std::string(kFenceGpu) + kLdRelaxed}) +
                  // faulty: release at .cta scope across CTAs (8.9.4: first op of X not morally strong with Y's last)
                  mk("release_cta", {"  st.release.cta.global.u32 [%rd2], %r7;\n", kLdAcquire}) +
                  // faulty: acquire at .cta scope across CTAs
                  mk("acquire_cta", {kStRelease, "  ld.acquire.cta.global.u32 %r5, [%rd2];\n"}) +
                  // faulty: the writer's fence at .cta scope (the pattern's first operation)
                  mk("fence_cta", {std::string("  fence.acq_rel.cta;\n") + kStRelaxed, kLdRelaxed, kFenceGpu}) +
                  // faulty: a volatile flag (8.4.2: relaxed.sys, orders no data)
                  mk("volatile", {"  st.volatile.global.u32 [%rd2], %r7;\n", "  ld.volatile.global.u32 %r5, [%rd2];\n"}) +
                  // correct: __threadfence() around the volatile flag (membar.gl = fence.sc.gpu)
                  mk("volatile_membar", {"  membar.gl;\n  st.volatile.global.u32 [%rd2], %r7;\n", "  ld.volatile.global.u32 %r5, [%rd2];\n",
                                         "  membar.gl;\n"}) +
                  // faulty: membar.cta (fence.sc.cta) does not include the other CTA
                  mk("volatile_membar_cta", {"  membar.cta;\n  st.volatile.global.u32 [%rd2], %r7;\n",
                                             "  ld.volatile.global.u32 %r5, [%rd2];\n", "  membar.cta;\n"}) +
                  // correct: red.release as the flag
                  mk("red_release", {"  red.release.gpu.global.add.u32 [%rd2], 1;\n", kLdAcquire}) +
                  // faulty: red.relaxed as the flag, no fence
                  mk("red_relaxed", {"  red.relaxed.gpu.global.add.u32 [%rd2], 1;\n", kLdAcquire}) +
                  // faulty: no bar.warp.sync in the writer: lane 0's release does not cover lanes 1..31's stores
                  mk("no_writer_warp_sync", {kStRelease, kLdAcquire, "", "", kWarpSync}) +
                  // faulty: no bar.warp.sync in the reader: lanes 1..31 read without waiting for lane 0's acquire
                  mk("no_reader_warp_sync", {kStRelease, kLdAcquire, "", kWarpSync, ""}) +
                  // faulty (ISA): the reader's lanes learn the flag through shfl.sync only -- not a memory ordering
                  mk("reader_shfl_only", {kStRelease, kLdAcquire, "", kWarpSync, shfl}) +
                  mk("reader_vote_only", {kStRelease, kLdAcquire, "", kWarpSync, "  vote.sync.ballot.b32 %r9, %p1, 0xffffffff;\n"}) +
                  // .cluster scope: within one cluster (clean) and across clusters (race)
                  mk("release_acquire_cluster",
                     {"  st.release.cluster.global.u32 [%rd2], %r7;\n", "  ld.acquire.cluster.global.u32 %r5, [%rd2];\n"}));
    data = buffer(32 * 4);
    flag = buffer(8);
    out = buffer(32 * 4);
  }

  LaunchResult run(const char* name, std::uint64_t seed, std::uint32_t grid = 2, std::uint32_t cluster = 1,
                   std::uint64_t step_limit = 200'000) {
    fill(data, 32 * 4, 0);
    fill(flag, 8, 0);
    fill(out, 32 * 4, 0xFF);
    void* args[] = {&data, &flag, &out};
    return launch(name, grid, 32, seed, args, cluster, step_limit);
  }
  bool copied() {
    for (std::uint32_t t = 0; t < 32; ++t)
      if (at<std::uint32_t>(out, t) != 100 + t) return false;
    return true;
  }
  int clean_seeds(const char* name, std::string* example, std::uint32_t grid = 2, std::uint32_t cluster = 1) {
    return seeds([&](std::uint64_t s) { return run(name, s, grid, cluster); }, [&](const LaunchResult& r) { return clean(r) && copied(); },
                 example);
  }
  // A race reported on the data (not only on the flag).
  int data_race_seeds(const char* name, std::string* example, std::uint32_t grid = 2, std::uint32_t cluster = 1) {
    return seeds([&](std::uint64_t s) { return run(name, s, grid, cluster); },
                 [&](const LaunchResult& r) { return finding_on(r, data, data + 32 * 4); }, example);
  }
};

// 8.8, 8.9.4: a release pattern observed by an acquire pattern, first and last operations morally
// strong: the reader's weak loads are ordered after the writer's weak stores. The reader (CTA 0)
// is launched before the writer (the last CTA) and must not hang: a grid of 2 and of 16.
TEST_F(MessagePassing, ReleaseAcquireFlagIsCleanAndTheWaiterLaunchedFirstDoesNotHang) {
  std::string example;
  EXPECT_EQ(clean_seeds("release_acquire", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("release_acquire", &example, 16), kSeeds) << example;
  EXPECT_EQ(clean_seeds("release_acquire_generic", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("release_sys_acquire_gpu", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("red_release", &example), kSeeds) << example;
}

// 8.8 third forms: "a release or acquire-release memory fence followed by a strong write on M",
// "a strong read on M followed by an acquire memory fence"; membar = fence.sc (membar/fence).
TEST_F(MessagePassing, FencesAroundARelaxedOrVolatileFlagAreClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("fences", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("volatile_membar", &example), kSeeds) << example;
}

// A weak flag: a kernel with no strong access runs its clusters one at a time (README), so the
// reader launched first spins into the step limit, which says why; made co-resident (an
// unrelated atomic), the flag's weak accesses race under every seed.
TEST_F(MessagePassing, AWeakFlagIsAReportedRace) {
  std::string example;
  auto race_or_why = [](const LaunchResult& r) {
    return has(r, ReportKind::Race) || message_has(r, ReportKind::StepLimit, "so its clusters run one at a time");
  };
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run("weak", s, 2, 1, 20'000); }, race_or_why, &example), kSeeds) << example;
  auto race = [](const LaunchResult& r) { return has(r, ReportKind::Race); };
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run("weak_coresident", s); }, race, &example), kSeeds) << example;
}

// 8.8: a strong write with no release fence before it is no release pattern; a strong read with
// no acquire fence after it is no acquire pattern. .volatile is relaxed at .sys (8.4.2).
TEST_F(MessagePassing, ARelaxedOrVolatileFlagWithoutFencesRacesOnTheData) {
  std::string example;
  for (const char* k : {"relaxed", "fence_before_read", "volatile", "red_relaxed"})
    EXPECT_EQ(data_race_seeds(k, &example), kSeeds) << k << "\n" << example;
}

// 8.9.4: "the first operation in X and the last operation in Y are morally strong"; 8.7: each
// of a scope that includes the other thread. .cta does not include another CTA; .cluster
// includes the other CTA of the cluster only.
TEST_F(MessagePassing, AScopeThatExcludesTheOtherCtaRacesOnTheData) {
  std::string example;
  for (const char* k : {"release_cta", "acquire_cta", "fence_cta", "volatile_membar_cta"})
    EXPECT_EQ(data_race_seeds(k, &example), kSeeds) << k << "\n" << example;
  EXPECT_EQ(clean_seeds("release_acquire_cluster", &example, 2, 2), kSeeds) << example;
  EXPECT_EQ(data_race_seeds("release_acquire_cluster", &example, 4, 2), kSeeds) << example;
}

// bar.warp.sync: "guarantee memory ordering among threads participating in barrier": without it
// lane 0's release carries only lane 0's own stores, and the reader's other lanes are ordered
// after nothing.
TEST_F(MessagePassing, WithoutBarWarpSyncTheOtherLanesRace) {
  std::string example;
  EXPECT_EQ(data_race_seeds("no_writer_warp_sync", &example), kSeeds) << example;
  EXPECT_EQ(data_race_seeds("no_reader_warp_sync", &example), kSeeds) << example;
}

// CHECKER BUG (gap): shfl.sync is no memory ordering. The ISA's shfl.sync only makes the thread
// "wait until all non-exited threads corresponding to membermask have executed shfl.sync"; unlike
// bar.warp.sync ("also guarantee memory ordering among threads participating"), it promises no
// ordering, 8.9.4 lists no warp collective among the operations that synchronize, and 8.5 says
// "the warp is not a scope". So lanes 1..31, which learn the flag from lane 0 by shfl.sync, read
// the data unordered after the writer's stores: a data race (8.7.1). The virtual device joins the
// clocks of a warp collective's lanes (exec/interpreter.cc gather -> RaceDetector::join), so
// shfl.sync (and vote.sync, elect.sync, match.sync) order memory there and this passes clean.
TEST_F(MessagePassing, Found_ShflSyncIsNoMemoryOrdering) {
  std::string example;
  EXPECT_EQ(data_race_seeds("reader_shfl_only", &example), kSeeds) << example;
  EXPECT_EQ(data_race_seeds("reader_vote_only", &example), kSeeds) << example;
}

// ==== Split-K with a per-tile atomic ticket ==================================================
//
// 2 tiles x 4 splits, one warp per CTA (CTA c: tile c / 4). Each lane stores its f32 partial
// (1000 c + lane) to ws[c * 32 + lane] with a weak st.global; SYNC1; lane 0 runs TICKET (the
// old value of the tile's counter into %r6); the warp learns it by shfl.sync; SYNC2; the last
// arriver (ticket 3) sums the tile's four partials with weak ld.global, writes out, and RESETs
// the counter.
struct Tk {
  std::string ticket = "  @%p1 atom.acq_rel.gpu.global.add.u32 %r6, [%rd11], 1;\n", sync1 = kWarpSync, sync2 = kWarpSync,
              reset = "  @%p1 st.global.u32 [%rd11], 0;\n", load = "ld.global.f32";
};

std::string ticket_kernel(const std::string& name, const Tk& k) {
  return sub(".visible .entry NAME(.param .u64 ws, .param .u64 counter, .param .u64 out)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<20>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<16>;\n"
             "  ld.param.u64 %rd1, [ws];\n  ld.param.u64 %rd2, [counter];\n  ld.param.u64 %rd3, [out];\n"
             "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  shr.u32 %r11, %r2, 2;\n"
             "  mul.wide.u32 %rd10, %r11, 4;\n  add.u64 %rd11, %rd2, %rd10;\n"
             "  shl.b32 %r4, %r2, 5;\n  add.u32 %r4, %r4, %r1;\n  mul.wide.u32 %rd4, %r4, 4;\n  add.u64 %rd5, %rd1, %rd4;\n"
             "  mul.lo.u32 %r5, %r2, 1000;\n  add.u32 %r5, %r5, %r1;\n  cvt.rn.f32.u32 %f1, %r5;\n"
             "  st.global.f32 [%rd5], %f1;\n"
             "SYNC1  mov.u32 %r6, 0;\n  setp.eq.u32 %p1, %r1, 0;\n"
             "TICKET  shfl.sync.idx.b32 %r7, %r6, 0, 0x1f, 0xffffffff;\n"
             "SYNC2  setp.ne.u32 %p2, %r7, 3;\n  @%p2 bra DONE;\n"
             "  mov.f32 %f2, 0f00000000;\n  mov.u32 %r9, 0;\n"
             "LOOP:\n  shl.b32 %r10, %r11, 2;\n  add.u32 %r10, %r10, %r9;\n  shl.b32 %r10, %r10, 5;\n  add.u32 %r10, %r10, %r1;\n"
             "  mul.wide.u32 %rd6, %r10, 4;\n  add.u64 %rd7, %rd1, %rd6;\n  LOAD %f3, [%rd7];\n  add.f32 %f2, %f2, %f3;\n"
             "  add.u32 %r9, %r9, 1;\n  setp.lt.u32 %p3, %r9, 4;\n  @%p3 bra LOOP;\n"
             "  shl.b32 %r12, %r11, 5;\n  add.u32 %r12, %r12, %r1;\n  mul.wide.u32 %rd8, %r12, 4;\n  add.u64 %rd9, %rd3, %rd8;\n"
             "  st.global.f32 [%rd9], %f2;\n"
             "RESETDONE:\n  ret;\n}\n",
             {{"NAME", name}, {"SYNC1", k.sync1}, {"TICKET", k.ticket}, {"SYNC2", k.sync2}, {"RESET", k.reset}, {"LOAD", k.load}});
}

struct Ticket : Battery {
  static constexpr std::uint32_t kTiles = 2, kCtas = kTiles * 4;
  std::uint64_t ws = 0, counter = 0, out = 0;

  void SetUp() override {
    auto mk = [](const char* n, Tk k) { return ticket_kernel(n, k); };
    Tk no_acquire, relaxed, fences, no_sync1, no_sync2, cta, relaxed_reset, nc;
    no_acquire.ticket = "  @%p1 atom.release.gpu.global.add.u32 %r6, [%rd11], 1;\n";
    relaxed.ticket = "  @%p1 atom.relaxed.gpu.global.add.u32 %r6, [%rd11], 1;\n";
    fences.ticket = "  @%p1 fence.acq_rel.gpu;\n  @%p1 atom.relaxed.gpu.global.add.u32 %r6, [%rd11], 1;\n  @%p1 fence.acq_rel.gpu;\n";
    no_sync1.sync1 = "";
    no_sync2.sync2 = "";
    cta.ticket = "  @%p1 atom.acq_rel.cta.global.add.u32 %r6, [%rd11], 1;\n";
    relaxed_reset.reset = "  @%p1 st.relaxed.gpu.global.u32 [%rd11], 0;\n";
    nc.load = "ld.global.nc.f32";
    m = &dev.load(std::string(kHeader) + mk("ticket", {}) + mk("ticket_fences", fences) + mk("ticket_relaxed_reset", relaxed_reset) +
                  mk("no_acquire", no_acquire) + mk("relaxed", relaxed) + mk("no_sync_before", no_sync1) +
                  mk("no_sync_after", no_sync2) + mk("cta_scope", cta) + mk("nc_reads", nc));
    ws = buffer(kCtas * 32 * 4);
    counter = buffer(kTiles * 4);
    out = buffer(kTiles * 32 * 4);
  }
  LaunchResult run(const char* name, std::uint64_t seed) {
    fill(ws, kCtas * 32 * 4, 0xFF);
    fill(counter, kTiles * 4, 0);
    fill(out, kTiles * 32 * 4, 0);
    void* args[] = {&ws, &counter, &out};
    return launch(name, kCtas, 32, seed, args);
  }
  // out[tile][lane] = sum over the tile's CTAs c of 1000 c + lane; the counters reset.
  bool summed() {
    for (std::uint32_t t = 0; t < kTiles; ++t) {
      if (at<std::uint32_t>(counter, t) != 0) return false;
      for (std::uint32_t l = 0; l < 32; ++l)
        if (at<float>(out, t * 32 + l) != static_cast<float>(1000 * (16 * t + 6) + 4 * l)) return false;
    }
    return true;
  }
  int clean_seeds(const char* name, std::string* example) {
    return seeds([&](std::uint64_t s) { return run(name, s); }, [&](const LaunchResult& r) { return clean(r) && summed(); }, example);
  }
  int partial_race_seeds(const char* name, std::string* example) {
    auto found = [&](const LaunchResult& r) { return finding_on(r, ws, ws + kCtas * 32 * 4); };
    return seeds([&](std::uint64_t s) { return run(name, s); }, found, example);
  }
};

// The pattern as the split-K kernels will use it: bar.warp.sync orders the lanes' partial stores
// before lane 0's atom.add.acq_rel (a release pattern carrying them, 8.8); the last arriver's
// acquire observes every earlier ticket through the RMW chain (8.9.2 observation order), and
// bar.warp.sync orders its lanes after it. The weak reset is ordered after every earlier atom
// (8.9.5: observation order, then program order on the same address). Also with relaxed atomics
// between fence.acq_rel.gpu on both sides, and with a relaxed reset.
TEST_F(Ticket, TheTicketPatternIsClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("ticket", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("ticket_fences", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("ticket_relaxed_reset", &example), kSeeds) << example;
}

// Without the acquire (atom.release, or atom.relaxed with no fence), the last arriver's weak
// reads of the other partials are not ordered after their stores (8.8: no acquire pattern).
TEST_F(Ticket, WithoutTheAcquireTheLastArriversReadsRace) {
  std::string example;
  EXPECT_EQ(partial_race_seeds("no_acquire", &example), kSeeds) << example;
  EXPECT_EQ(partial_race_seeds("relaxed", &example), kSeeds) << example;
}

// Without bar.warp.sync before the ticket, lane 0's release carries lane 0's store only: the
// other lanes' partials are unordered before the last arriver's reads.
TEST_F(Ticket, WithoutBarWarpSyncBeforeTheTicketTheOtherLanesPartialsRace) {
  std::string example;
  EXPECT_EQ(partial_race_seeds("no_sync_before", &example), kSeeds) << example;
}

// atom.acq_rel.cta from the CTAs of a tile: not morally strong (8.7; 8.10.3 litmus test 2): no
// synchronization, and the counter's atomics themselves race.
TEST_F(Ticket, ACtaScopedTicketRaces) {
  std::string example;
  EXPECT_EQ(partial_race_seeds("cta_scope", &example), kSeeds) << example;
}

// CHECKER BUG (gap): without bar.warp.sync AFTER lane 0's acquire, the last arriver's lanes
// 1..31 learn the ticket by shfl.sync only, which orders no memory (see
// MessagePassing.Found_ShflSyncIsNoMemoryOrdering): their weak reads of the other CTAs'
// partials race with the stores. The device joins the warp at the shfl.sync and passes it.
TEST_F(Ticket, Found_WithoutBarWarpSyncAfterTheAcquireTheOtherLanesRace) {
  std::string example;
  EXPECT_EQ(partial_race_seeds("no_sync_after", &example), kSeeds) << example;
}

// CHECKER BUG (gap): the last arriver reads the partials with ld.global.nc (what nvcc emits for
// `const __restrict__` / __ldg). PTX ISA 8.1: "The memory consistency model does not apply to
// texture (including ld.global.nc) and surface accesses" -- the non-coherent path may return
// stale data for bytes written during the kernel, whatever synchronization precedes it. The
// device (memory_order.h: ".nc reads outside the model and reads as weak") judges it as a weak
// load, finds it ordered, and passes it; a read through .nc of bytes written in the same launch
// should be reported.
TEST_F(Ticket, Found_NonCoherentLoadsOfPartialsWrittenInTheLaunch) {
  std::string example;
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run("nc_reads", s); }, [](const LaunchResult& r) { return !clean(r); }, &example), kSeeds)
      << example;
}

// ==== CUDA sample threadFenceReduction =======================================================
//
// reduceSinglePass as the sample writes it (one warp per block, the block's partial ctaid + 1):
// thread 0 stores g_odata[blockIdx.x]; every thread runs __threadfence() (membar.gl); thread 0
// takes atomicInc(&retirementCount, gridDim.x) and writes amLast to shared memory; LAST (nothing,
// as in the sample, or a fence after the ticket); __syncthreads(); the last block's threads
// tid < gridDim read g_odata[tid] with plain loads and sum them; thread 0 writes the total to
// g_odata[0] and resets retirementCount with a plain store.
std::string threadfence_kernel(const std::string& name, const std::string& last) {
  return sub(".visible .entry NAME(.param .u64 odata, .param .u64 count)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<16>;\n"
             "  .shared .align 4 .u32 amLast;\n  .shared .align 4 .f32 ssum;\n"
             "  ld.param.u64 %rd1, [odata];\n  ld.param.u64 %rd2, [count];\n"
             "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %nctaid.x;\n  setp.eq.u32 %p1, %r1, 0;\n"
             "  mov.u32 %r11, amLast;\n  mov.u32 %r12, ssum;\n  mov.u32 %r5, 0;\n"
             "  add.u32 %r4, %r2, 1;\n  cvt.rn.f32.u32 %f1, %r4;\n  mul.wide.u32 %rd3, %r2, 4;\n  add.u64 %rd4, %rd1, %rd3;\n"
             "  @%p1 st.global.f32 [%rd4], %f1;\n"
             "  membar.gl;\n"
             "  @%p1 atom.global.inc.u32 %r5, [%rd2], %r3;\n"
             "  add.u32 %r6, %r3, -1;\n  setp.eq.u32 %p2, %r5, %r6;\n  selp.u32 %r7, 1, 0, %p2;\n"
             "  @%p1 st.shared.u32 [%r11], %r7;\n  @%p1 st.shared.f32 [%r12], 0f00000000;\n"
             "LAST  bar.sync 0;\n"
             "  ld.shared.u32 %r8, [%r11];\n  setp.eq.u32 %p3, %r8, 0;\n  @%p3 bra DONE;\n"
             "  setp.ge.u32 %p4, %r1, %r3;\n  @%p4 bra SUMMED;\n"
             "  mul.wide.u32 %rd5, %r1, 4;\n  add.u64 %rd6, %rd1, %rd5;\n  ld.global.f32 %f2, [%rd6];\n"
             "  red.shared.add.f32 [%r12], %f2;\n"
             "SUMMED:\n  bar.sync 0;\n  @!%p1 bra DONE;\n"
             "  ld.shared.f32 %f3, [%r12];\n  st.global.f32 [%rd1], %f3;\n  st.global.u32 [%rd2], 0;\n"
             "DONE:\n  ret;\n}\n",
             {{"NAME", name}, {"LAST", last}});
}

struct ThreadFenceReduction : Battery {
  static constexpr std::uint32_t kBlocks = 4;
  std::uint64_t odata = 0, count = 0;

  void SetUp() override {
    m = &dev.load(std::string(kHeader) + threadfence_kernel("sample", "") +
                  threadfence_kernel("acquire_fence", "  @%p1 fence.acq_rel.gpu;\n") +
                  threadfence_kernel("acquire_membar", "  @%p1 membar.gl;\n"));
    odata = buffer(kBlocks * 4);
    count = buffer(4);
  }
  LaunchResult run(const char* name, std::uint64_t seed) {
    fill(odata, kBlocks * 4, 0);
    fill(count, 4, 0);
    void* args[] = {&odata, &count};
    return launch(name, kBlocks, 32, seed, args);
  }
  bool reduced() { return at<float>(odata, 0) == static_cast<float>(kBlocks * (kBlocks + 1) / 2) && at<std::uint32_t>(count, 0) == 0; }
};

// The fixed sample: the last block's ticket (a strong read of the counter) followed by an acquire
// fence is an acquire pattern (8.8), which synchronizes with every block's release pattern
// (membar.gl then the atomInc, a strong write) observed through the atomInc chain (8.9.2).
TEST_F(ThreadFenceReduction, WithAnAcquireFenceAfterTheTicketTheSampleIsClean) {
  std::string example;
  for (const char* k : {"acquire_fence", "acquire_membar"})
    EXPECT_EQ(seeds([&](std::uint64_t s) { return run(k, s); }, [&](const LaunchResult& r) { return clean(r) && reduced(); }, &example),
              kSeeds)
        << k << "\n" << example;
}

// The sample as written: the last block's only fence is BEFORE its ticket, so its ticket read is
// no acquire pattern (8.8). Its plain reads of g_odata are ordered after block k's store only
// when the last block's membar.gl follows block k's in Fence-SC order (8.9.3) -- in executions
// where it precedes it (the last block fences first, but takes its ticket last) they race
// (8.7.1). The device runs one interleaving per seed, so it finds the race only in the seeds that
// run that execution; the count is what `verify` (seeds 1 and 4) can hope for.
TEST_F(ThreadFenceReduction, TheSampleAsWrittenRacesInSomeExecutions) {
  std::string example;
  auto found = [&](const LaunchResult& r) { return finding_on(r, odata, odata + 16); };
  const int n = seeds([&](std::uint64_t s) { return run("sample", s); }, found, &example);
  EXPECT_GT(n, 0) << example;
  RecordProperty("seeds_reporting_the_race", n);
  std::printf("[ battery  ] threadFenceReduction as written: race reported under %d of %d seeds\n", n, kSeeds);
}

// ==== An atom.cas spin lock between CTAs =====================================================
//
// Thread 0 of each of 4 CTAs takes the lock with ACQ (the old value into %r5) until it was 0,
// runs AFTER, increments a plain counter with weak ld/st, and releases the lock with REL.
std::string lock_kernel(const std::string& name, const std::string& acq, const std::string& after, const std::string& rel) {
  return sub(".visible .entry NAME(.param .u64 lock, .param .u64 counter)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
             "  ld.param.u64 %rd1, [lock];\n  ld.param.u64 %rd2, [counter];\n  mov.u32 %r1, %tid.x;\n"
             "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
             "LOCK:\nACQ  setp.ne.u32 %p2, %r5, 0;\n  @%p2 bra LOCK;\nAFTER"
             "  ld.global.u32 %r6, [%rd2];\n  add.u32 %r6, %r6, 1;\n  st.global.u32 [%rd2], %r6;\n"
             "REL"
             "DONE:\n  ret;\n}\n",
             {{"NAME", name}, {"ACQ", acq}, {"AFTER", after}, {"REL", rel}});
}

struct SpinLock : Battery {
  std::uint64_t lock = 0, counter = 0;

  void SetUp() override {
    const std::string cas_acq = "  atom.acquire.gpu.global.cas.b32 %r5, [%rd1], 0, 1;\n";
    const std::string cas_rlx = "  atom.global.cas.b32 %r5, [%rd1], 0, 1;\n";
    const std::string st_rel = "  st.release.gpu.global.u32 [%rd1], 0;\n";
    m = &dev.load(std::string(kHeader) + lock_kernel("acquire_release", cas_acq, "", st_rel) +
                  lock_kernel("exch_release", cas_acq, "", "  atom.release.gpu.global.exch.b32 %r7, [%rd1], 0;\n") +
                  // the CUDA idiom: while (atomicCAS(&l, 0, 1)); __threadfence(); ...; __threadfence(); atomicExch(&l, 0);
                  lock_kernel("cuda_threadfence", cas_rlx, "  membar.gl;\n", "  membar.gl;\n  atom.global.exch.b32 %r7, [%rd1], 0;\n") +
                  lock_kernel("relaxed_acquire", cas_rlx, "", st_rel) +
                  lock_kernel("relaxed_release", cas_acq, "", "  st.relaxed.gpu.global.u32 [%rd1], 0;\n") +
                  lock_kernel("weak_release", cas_acq, "", "  st.global.u32 [%rd1], 0;\n") +
                  lock_kernel("cta_scope", "  atom.acquire.cta.global.cas.b32 %r5, [%rd1], 0, 1;\n", "",
                              "  st.release.cta.global.u32 [%rd1], 0;\n"));
    lock = buffer(4);
    counter = buffer(4);
  }
  LaunchResult run(const char* name, std::uint64_t seed) {
    fill(lock, 4, 0);
    fill(counter, 4, 0);
    void* args[] = {&lock, &counter};
    return launch(name, 4, 32, seed, args);
  }
};

// 8.8: the CAS that takes the lock is an acquire pattern (atom.acquire, or a strong read then an
// acquire fence), the store or exchange that frees it a release pattern; each critical section
// is ordered after the previous one.
TEST_F(SpinLock, AcquireAndReleaseOrderTheCriticalSections) {
  std::string example;
  for (const char* k : {"acquire_release", "exch_release", "cuda_threadfence"})
    EXPECT_EQ(seeds([&](std::uint64_t s) { return run(k, s); },
                    [&](const LaunchResult& r) { return clean(r) && at<std::uint32_t>(counter, 0) == 4; }, &example),
              kSeeds)
        << k << "\n" << example;
}

TEST_F(SpinLock, ALockWithoutAcquireOrReleaseOrAtCtaScopeRaces) {
  std::string example;
  for (const char* k : {"relaxed_acquire", "relaxed_release", "weak_release", "cta_scope"})
    EXPECT_EQ(seeds([&](std::uint64_t s) { return run(k, s); }, [&](const LaunchResult& r) { return finding_on(r, counter, counter + 4); },
                    &example),
              kSeeds)
        << k << "\n" << example;
}

// ==== TMA (cp.async.bulk.tensor) reading global data written by generic stores ================
//
// One CTA of 64 threads: thread 0 inits the mbarrier; a barrier; every thread runs BEFORE, stores
// 8 bytes of a 16 x 16 bf16 tile with st.global, runs WFENCE; a barrier; thread 0 runs IFENCE
// and TMA-loads the tile; every thread waits and copies its 8 bytes out.
std::string tma_kernel(const std::string& name, const std::string& before, const std::string& wfence, const std::string& ifence) {
  return sub(".visible .entry NAME(.param .align 128 .b8 map[128], .param .u64 w, .param .u64 out)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n"
             "  .shared .align 128 .b8 tile[512];\n  .shared .align 8 .u64 bar;\n"
             "  mov.b64 %rd1, map;\n  cvta.param.u64 %rd1, %rd1;\n  ld.param.u64 %rd2, [w];\n  ld.param.u64 %rd4, [out];\n"
             "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n  mov.u32 %r3, tile;\n  mov.u32 %r4, 0;\n"
             "  mul.wide.u32 %rd5, %r1, 8;\n  setp.ne.u32 %p1, %r1, 0;\n"
             "  @!%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n  bar.sync 0;\n"
             "  add.u64 %rd6, %rd2, %rd5;\n  cvt.u64.u32 %rd7, %r1;\n"
             "BEFORE  st.global.u64 [%rd6], %rd7;\nWFENCE  bar.sync 0;\n  @%p1 bra WAIT;\n"
             "IFENCE  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 512;\n"
             "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r4, %r4}], [%r2];\n"
             "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 0;\n  @!%p3 bra WAIT;\n"
             "  cvt.u32.u64 %r8, %rd5;\n  add.u32 %r9, %r3, %r8;\n  ld.shared.u64 %rd8, [%r9];\n"
             "  add.u64 %rd9, %rd4, %rd5;\n  st.global.u64 [%rd9], %rd8;\n  ret;\n}\n",
             {{"NAME", name}, {"BEFORE", before}, {"WFENCE", wfence}, {"IFENCE", ifence}});
}

struct TmaOfGenericStores : Battery {
  alignas(64) std::uint8_t map[128];
  std::uint64_t w = 0, out = 0;

  void SetUp() override {
    const std::string g = "  fence.proxy.async.global;\n";
    m = &dev.load(std::string(kHeader) + tma_kernel("no_fence", "", "", "") + tma_kernel("writer_fence", "", g, "") +
                  tma_kernel("issuer_fence", "", "", g) + tma_kernel("issuer_fence_all_spaces", "", "", "  fence.proxy.async;\n") +
                  tma_kernel("fence_before_store", g, "", "") +
                  tma_kernel("shared_fence", "", "  fence.proxy.async.shared::cta;\n", "  fence.proxy.async.shared::cta;\n"));
    w = buffer(512);
    out = buffer(512);
    std::uint64_t dims[2] = {16, 16}, strides[1] = {32};
    std::uint32_t box[2] = {16, 16}, es[2] = {1, 1};
    EXPECT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, w, dims, strides, box, es, 0, 0, 0), "");
  }
  LaunchResult run(const char* name, std::uint64_t seed) {
    fill(w, 512, 0);
    fill(out, 512, 0);
    void* args[] = {map, &w, &out};
    return launch(name, 1, 64, seed, args);
  }
  bool copied() {
    for (std::uint64_t t = 0; t < 64; ++t)
      if (at<std::uint64_t>(out, t) != t) return false;
    return true;
  }
};

// cp.async.bulk / Async Proxy: "fence.proxy.async should be used to synchronize memory between
// generic proxy and the async proxy"; 8.9.5: proxy-preserved base causality order needs the same
// proxy (or a proxy fence on the path). membar/fence: the fence orders "operations performed on
// objects in the state space specified" -- a .shared::cta fence does not cover global memory, and
// a fence orders only the thread's accesses before it.
TEST_F(TmaOfGenericStores, ATmaLoadOfGenericStoresWithoutAGlobalProxyFenceOnTheWayIsReported) {
  std::string example;
  for (const char* k : {"no_fence", "fence_before_store", "shared_fence"})
    EXPECT_EQ(seeds([&](std::uint64_t s) { return run(k, s); },
                    [](const LaunchResult& r) { return has(r, ReportKind::ProxyFence); },
                    &example),
              kSeeds)
        << k << "\n" << example;
}

TEST_F(TmaOfGenericStores, ATmaLoadOfGenericStoresWithAProxyFenceOnTheWayIsClean) {
  std::string example;
  for (const char* k : {"writer_fence", "issuer_fence", "issuer_fence_all_spaces"})
    EXPECT_EQ(seeds([&](std::uint64_t s) { return run(k, s); }, [&](const LaunchResult& r) { return clean(r) && copied(); }, &example),
              kSeeds)
        << k << "\n" << example;
}

// ==== What the ISA makes race-free (false alarms) ============================================
//
// Four CTAs of one warp; BODY runs in every thread with %rd1 = a (zeroed), %rd2 = b (host
// written: 0, 1, 2, ...), %r1 = %tid.x, %r2 = %ctaid.x, %p1 = (tid == 0), %p2 = (ctaid == 0).
std::string fa_kernel(const std::string& name, const std::string& body) {
  return sub(".visible .entry NAME(.param .u64 a, .param .u64 b)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<16>;\n"
             "  ld.param.u64 %rd1, [a];\n  ld.param.u64 %rd2, [b];\n  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n"
             "  setp.eq.u32 %p1, %r1, 0;\n  setp.eq.u32 %p2, %r2, 0;\n  mov.u32 %r5, 0;\n"
             "BODY  ret;\n}\n",
             {{"NAME", name}, {"BODY", body}});
}

struct NoFalseAlarm : Battery {
  std::uint64_t a = 0, b = 0;

  void SetUp() override {
    a = buffer(256);
    b = buffer(256);
  }
  std::string loaded;
  LaunchResult run(const std::string& body, std::uint64_t seed, std::uint32_t grid = 4) {
    if (!m || body != loaded) {
      if (m) dev.unload(m);
      m = &dev.load(std::string(kHeader) + fa_kernel("k", body));
      loaded = body;
    }
    fill(a, 256, 0);
    for (std::uint32_t i = 0; i < 64; ++i) std::memcpy(dev.memory().find(b + 4 * i, 4), &i, 4);
    void* args[] = {&a, &b};
    return launch("k", grid, 32, seed, args);
  }
  int clean_seeds(const std::string& body, std::string* example, std::uint32_t grid = 4) {
    return seeds([&](std::uint64_t s) { return run(body, s, grid); }, clean, example);
  }
};

// 8.7: two atomic operations of the same size on the same address, each .gpu (the default) or
// .sys, are morally strong: every thread of every CTA, many operations, no race -- and atomicity
// (8.10.3) gives the exact totals.
TEST_F(NoFalseAlarm, SameSizeAtomicsOnOneAddressFromManyCtas) {
  const std::string body =
      "  atom.global.add.u32 %r6, [%rd1], 1;\n  red.global.add.f32 [%rd1+4], 0f3F800000;\n"
      "  atom.global.exch.b32 %r6, [%rd1+8], %r2;\n  atom.global.max.u32 %r6, [%rd1+12], %r1;\n"
      "  atom.global.cas.b32 %r6, [%rd1+16], %r2, %r1;\n  atom.global.add.u64 %rd5, [%rd1+24], 1;\n"
      "  atom.acq_rel.sys.global.add.u32 %r6, [%rd1+32], 1;\n  red.release.gpu.global.add.u32 [%rd1+32], 1;\n"
      "  atom.global.inc.u32 %r6, [%rd1+36], 1000000;\n  atom.relaxed.sys.global.or.b32 %r6, [%rd1+40], %r1;\n";
  std::string example;
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run(body, s); },
                  [&](const LaunchResult& r) {
                    return clean(r) && at<std::uint32_t>(a, 0) == 128 && at<float>(a, 1) == 128.0f && at<std::uint32_t>(a, 3) == 31 &&
                           at<std::uint64_t>(a, 3) == 128 && at<std::uint32_t>(a, 8) == 256 && at<std::uint32_t>(a, 9) == 128;
                  },
                  &example),
            kSeeds)
      << example;
}

// 8.7: strong (relaxed, volatile = relaxed.sys, acquire) loads and stores of one location, each
// scope including the other thread, are morally strong even without atomics; a vector access is
// one access per element (8.2.4), so a v2.u32 store and a u32 load of its second element overlap
// completely. Their faulty twin: a u64 relaxed store over a u32 one overlaps partially (8.2.1): a
// race (8.7: "overlap completely").
TEST_F(NoFalseAlarm, MorallyStrongLoadsAndStoresWithoutAtomics) {
  const std::string body =
      "  @%p1 st.relaxed.gpu.global.u32 [%rd1], %r2;\n  @!%p1 ld.relaxed.gpu.global.u32 %r6, [%rd1];\n"
      "  @%p1 st.volatile.global.u32 [%rd1], %r2;\n  @!%p1 ld.volatile.global.u32 %r6, [%rd1];\n"
      "  ld.acquire.sys.global.u32 %r6, [%rd1];\n  @%p1 atom.global.add.u32 %r6, [%rd1], 1;\n"
      "  @%p1 st.relaxed.gpu.global.v2.u32 [%rd1+64], {%r2, %r2};\n  @!%p1 ld.relaxed.gpu.global.u32 %r6, [%rd1+68];\n"
      "  @!%p1 ld.relaxed.sys.global.u32 %r6, [%rd1+8];\n  @%p1 st.relaxed.gpu.global.u32 [%rd1+8], %r2;\n";
  std::string example;
  EXPECT_EQ(clean_seeds(body, &example), kSeeds) << example;
  const std::string mixed = "  @%p1 st.relaxed.gpu.global.u32 [%rd1], %r2;\n  @%p1 st.relaxed.gpu.global.u64 [%rd1], %rd1;\n";
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run(mixed, s); }, [](const LaunchResult& r) { return has(r, ReportKind::Race); }, &example),
            kSeeds)
      << example;
}

// No write, no conflict (8.7.1): every thread of every CTA reads the same host-written inputs,
// with ld, ld.nc, ldu and a strong ld.
TEST_F(NoFalseAlarm, ReadsOfReadOnlyInputs) {
  const std::string body =
      "  mul.wide.u32 %rd3, %r1, 4;\n  add.u64 %rd4, %rd2, %rd3;\n  ld.global.u32 %r6, [%rd4];\n  ld.global.nc.u32 %r7, [%rd4];\n"
      "  ldu.global.u32 %r8, [%rd2];\n  ld.relaxed.gpu.global.u32 %r9, [%rd4+4];\n  ld.global.nc.v4.u32 {%r6, %r7, %r8, %r9}, [%rd2];\n"
      "  add.u32 %r6, %r6, %r9;\n  mul.wide.u32 %rd5, %r2, 4;\n  add.u64 %rd6, %rd1, %rd5;\n  @%p1 st.global.u32 [%rd6], %r6;\n";
  std::string example;
  EXPECT_EQ(clean_seeds(body, &example), kSeeds) << example;
}

// A grid barrier (every CTA's thread 0: red.release.gpu on a counter, spin with ld.acquire until
// all arrived, then bar.sync) orders every CTA's stores before every CTA's loads: each CTA reads
// the word the next CTA wrote.
TEST_F(NoFalseAlarm, AGridBarrierThroughACounterOrdersAllCtas) {
  const std::string body =
      "  mov.u32 %r3, %nctaid.x;\n  mul.wide.u32 %rd3, %r2, 4;\n  add.u64 %rd4, %rd1, %rd3;\n  @%p1 st.global.u32 [%rd4+64], %r2;\n"
      "  bar.sync 0;\n  @!%p1 bra WAITED;\n  red.release.gpu.global.add.u32 [%rd1], 1;\n"
      "SPIN:\n  ld.acquire.gpu.global.u32 %r6, [%rd1];\n  setp.lt.u32 %p3, %r6, %r3;\n  @%p3 bra SPIN;\n"
      "WAITED:\n  bar.sync 0;\n  add.u32 %r7, %r2, 1;\n  rem.u32 %r7, %r7, %r3;\n  mul.wide.u32 %rd5, %r7, 4;\n"
      "  add.u64 %rd6, %rd1, %rd5;\n"
      "  ld.global.u32 %r8, [%rd6+64];\n";
  std::string example;
  EXPECT_EQ(clean_seeds(body, &example), kSeeds) << example;
}

// CHECKER BUG (false alarm): 8.9.5 Causality order -- "X precedes Y in causality order if ... for
// some operation Z, X precedes Z in observation order, and Z precedes Y in proxy-preserved base
// causality order" (the latter: base causality order between accesses "to the same address,
// using the generic proxy"). CTA 1 stores the flag with st.relaxed.gpu; CTA 0 spins on it with a
// strong load (Z, which observes it: 8.9.2), then reads the flag with a weak load and re-arms it
// with a weak store (Y: program order after Z, same address). Both are causally after CTA 1's
// store: no data race (8.7.1). The device compares them with the flag's last write only through
// release/acquire knowledge, which the relaxed store never gave, and reports a race. The same
// with the flag published as "fence.acq_rel.gpu; st.relaxed" and acquired with ld.acquire: the
// release pattern's knowledge is taken at the fence, before the store itself, so the consumer's
// weak re-arm of the flag is reported as racing with the producer's flag store.
TEST_F(NoFalseAlarm, Found_AWeakAccessAfterObservingAStrongWriteOfTheSameAddressIsOrdered) {
  const std::string relaxed =
      "  @!%p1 bra DONE;\n  @%p2 bra READER;\n  mov.u32 %r6, 1;\n  st.relaxed.gpu.global.u32 [%rd1], %r6;\n  bra DONE;\n"
      "READER:\n  ld.relaxed.gpu.global.u32 %r7, [%rd1];\n  setp.ne.u32 %p3, %r7, 1;\n  @%p3 bra READER;\n"
      "  ld.global.u32 %r8, [%rd1];\n  st.global.u32 [%rd1], 0;\nDONE:\n";
  const std::string fenced =
      "  @!%p1 bra DONE;\n  @%p2 bra READER;\n  mov.u32 %r6, 1;\n  st.global.u32 [%rd1+4], %r6;\n  fence.acq_rel.gpu;\n"
      "  st.relaxed.gpu.global.u32 [%rd1], %r6;\n  bra DONE;\n"
      "READER:\n  ld.acquire.gpu.global.u32 %r7, [%rd1];\n  setp.ne.u32 %p3, %r7, 1;\n  @%p3 bra READER;\n"
      "  ld.global.u32 %r8, [%rd1+4];\n  st.global.u32 [%rd1], 0;\nDONE:\n";
  std::string example;
  EXPECT_EQ(clean_seeds(relaxed, &example, 2), kSeeds) << example;
  EXPECT_EQ(clean_seeds(fenced, &example, 2), kSeeds) << example;
}

// CHECKER BUG (false alarm): 8.4 -- "write operation: All variants of st instruction, and atomic
// operations if they result in a write". A failing atom.cas writes nothing: it is a read. CTA 1
// stores 5 to x and releases a flag; CTAs 0 and 2 acquire it; CTA 2 tries atom.cas(x, 0 -> 7),
// which fails (x is 5), and CTA 0 reads x with a weak load. No two of these conflict except CTA
// 1's store with each read, which the flag orders: race-free. The device records every atom as a
// write (insns/data.cc: the old value is stored back) and reports the failed CAS racing with CTA
// 0's read.
TEST_F(NoFalseAlarm, Found_AFailedCasIsNoWrite) {
  const std::string body =
      "  @!%p1 bra DONE;\n  setp.eq.u32 %p3, %r2, 1;\n  @%p3 bra WRITER;\n"
      "SPIN:\n  ld.acquire.gpu.global.u32 %r7, [%rd1];\n  setp.ne.u32 %p4, %r7, 1;\n  @%p4 bra SPIN;\n"
      "  @%p2 ld.global.u32 %r8, [%rd1+4];\n  @!%p2 atom.global.cas.b32 %r8, [%rd1+4], 0, 7;\n  bra DONE;\n"
      "WRITER:\n  mov.u32 %r6, 5;\n  st.global.u32 [%rd1+4], %r6;\n  mov.u32 %r6, 1;\n  st.release.gpu.global.u32 [%rd1], %r6;\n"
      "DONE:\n";
  std::string example;
  EXPECT_EQ(clean_seeds(body, &example, 3), kSeeds) << example;
}

// CHECKER BUG (false alarm; a limitation memory_model.h documents): 8.8 -- a release pattern is
// also "a release or acquire-release operation on M followed by a strong write on M in program
// order (E.g.: st.release [M]; st.relaxed [M];)". The writer stores the data, then st.release
// flag = 1, st.relaxed flag = 2; the reader waits for 2 with ld.acquire and reads the data:
// synchronized, race-free. The device lets only the release itself synchronize and reports the
// data read.
TEST_F(NoFalseAlarm, Found_AReleaseFollowedByAStrongWriteOfTheSameLocationReleases) {
  const std::string body =
      "  @!%p1 bra DONE;\n  @%p2 bra READER;\n  mov.u32 %r6, 42;\n  st.global.u32 [%rd1+4], %r6;\n  mov.u32 %r6, 1;\n"
      "  st.release.gpu.global.u32 [%rd1], %r6;\n  mov.u32 %r6, 2;\n  st.relaxed.gpu.global.u32 [%rd1], %r6;\n  bra DONE;\n"
      "READER:\n  ld.acquire.gpu.global.u32 %r7, [%rd1];\n  setp.ne.u32 %p3, %r7, 2;\n  @%p3 bra READER;\n"
      "  ld.global.u32 %r8, [%rd1+4];\nDONE:\n";
  std::string example;
  EXPECT_EQ(clean_seeds(body, &example, 2), kSeeds) << example;
}

// ==== Races the checker cannot see (gaps beyond shfl.sync and .nc) ============================

struct Gaps : NoFalseAlarm {};

// CHECKER BUG (gap): one write is remembered per byte, and a morally strong later write hides an
// earlier one. CTA 1 stores x with st.relaxed.gpu and tells CTA 2 through a relaxed word g (no
// synchronization); CTA 2 stores x with st.relaxed.gpu (morally strong with CTA 1's: no race)
// and releases flag f; CTA 0 acquires f and reads x with a weak load. CTA 1's store is not
// causally before that read (no release carries it; no read observes it, so no observation order
// either, 8.9.2/8.9.5) and they are not morally strong (the read is weak): a data race (8.7.1).
// The device compares the read with CTA 2's store only, which is ordered, and passes it.
TEST_F(Gaps, Found_AnEarlierStrongWriteHiddenByALaterOneStillRaces) {
  const std::string body =
      "  @!%p1 bra DONE;\n  mov.u32 %r6, 1;\n  setp.eq.u32 %p3, %r2, 1;\n  @%p3 bra FIRST;\n  setp.eq.u32 %p3, %r2, 2;\n"
      "  @%p3 bra SECOND;\n"
      "READER:\n  ld.acquire.gpu.global.u32 %r7, [%rd1];\n  setp.ne.u32 %p4, %r7, 1;\n  @%p4 bra READER;\n"
      "  ld.global.u32 %r8, [%rd1+8];\n  bra DONE;\n"
      "FIRST:\n  st.relaxed.gpu.global.u32 [%rd1+8], %r6;\n  st.relaxed.gpu.global.u32 [%rd1+4], %r6;\n  bra DONE;\n"
      "SECOND:\n  ld.relaxed.gpu.global.u32 %r7, [%rd1+4];\n  setp.ne.u32 %p4, %r7, 1;\n  @%p4 bra SECOND;\n"
      "  mov.u32 %r9, 2;\n  st.relaxed.gpu.global.u32 [%rd1+8], %r9;\n  st.release.gpu.global.u32 [%rd1], %r6;\nDONE:\n";
  std::string example;
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run(body, s, 3); }, [&](const LaunchResult& r) { return finding_on(r, a + 8, a + 12); },
                  &example),
            kSeeds)
      << example;
}

// CHECKER BUG (gap): the lanes of one warp are 32 threads (8.9.1: program order "does not relate
// operations from different threads"; 8.5: "the warp is not a scope"), and the atom instruction
// leaves the order of its lanes' same-address RMWs unspecified. Lane W stores data, then every
// lane does atom.acq_rel.gpu.add on one counter in one instruction, then lane R reads the data:
// R synchronizes with W only in executions where R's RMW follows W's in coherence order, so it is
// a data race (8.7.1) whichever lanes W and R are. The device runs the lanes in ascending order,
// so it reports the race for W = 31, R = 0 but passes W = 0, R = 31.
TEST_F(Gaps, Found_TheLaneOrderOfOneAtomInstructionIsNoSynchronization) {
  auto body = [](int writer, int reader) {
    return "  mov.u32 %r6, 42;\n  setp.eq.u32 %p3, %r1, " + std::to_string(writer) + ";\n  @%p3 st.global.u32 [%rd1+4], %r6;\n"
           "  atom.acq_rel.gpu.global.add.u32 %r7, [%rd1], 1;\n  setp.eq.u32 %p4, %r1, " + std::to_string(reader) +
           ";\n  @%p4 ld.global.u32 %r8, [%rd1+4];\n";
  };
  std::string example;
  auto found = [&](const LaunchResult& r) { return finding_on(r, a + 4, a + 8); };
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run(body(31, 0), s, 1); }, found, &example), kSeeds) << example;
  EXPECT_EQ(seeds([&](std::uint64_t s) { return run(body(0, 31), s, 1); }, found, &example), kSeeds) << example;
}

}  // namespace
}  // namespace mgpu::emu
