// CTAs that cooperate through global memory, as split-K and stream-K schedules do: partial
// tiles in a workspace, a per-tile flag, a CTA spinning until a peer has published its partial,
// a fixed reduction order. Each faulty kernel is written from the PTX ISA's memory consistency
// model (chapter 8: 8.7 morally strong operations, 8.8 release and acquire patterns, 8.9.4
// memory synchronization) and must be reported under every one of seeds 1..200; each correct
// twin must be clean under all of them, with race detection on as `verify` runs it
// (check/memory_model.h, exec/launch.cc's residency).
//   - serial split-K: CTA k waits until the flag says k, adds its partial to the workspace and
//     publishes k + 1; the last writes the output. Correct: st.release.gpu / red.release.gpu /
//     fence.acq_rel.gpu + relaxed st, red or atom / membar.gl + volatile, each with an acquiring
//     ld (or atom, or ld.relaxed + fence) in the spin. Faulty: a relaxed flag with no fence, a
//     flag at .cta scope, no barrier between the CTA's partial stores and the release, a weak
//     flag.
//   - forward progress: a chain that waits on the last CTA, with the grid larger than what can
//     be resident (step-limit naming the clusters that cannot start), and as a persistent grid.
//   - the async proxy: a TMA load of a workspace another CTA wrote with generic stores, without
//     fence.proxy.async (missing-proxy-fence), with it in the writer or the issuer; a TMA store's
//     result read by another CTA after wait_group.read (race) or wait_group (clean).
//   - atomics: a counter every thread of four CTAs increments (clean), at .cta scope (race);
//     shared-memory atomics of two warps (clean) and a shared flag released and acquired.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "core/emu/engines/tensor_map.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::clean;
using emu_test::count_seeds;
using emu_test::has;
using emu_test::kSeeds;

const char* kHeader = ".version 8.0\n.target sm_90a\n.address_size 64\n";

void replace(std::string& s, const std::string& what, const std::string& with) {
  for (std::size_t at; (at = s.find(what)) != std::string::npos;) s.replace(at, what.size(), with);
}

bool message_has(const LaunchResult& r, ReportKind k, const std::string& text) {
  for (const auto& x : r.reports)
    if (x.kind == k && x.message.find(text) != std::string::npos) return true;
  return false;
}

// ---- Serial split-K through a workspace and a flag ------------------------------------------

// 64 threads per CTA; CTA k's turn is k (or, `reverse`, nctaid - 1 - k). Thread 0 spins until
// the flag holds its turn (ACQUIRE loads the flag into %r5; AFTER runs once it does); a barrier;
// every thread adds turn + 1 + tid to its workspace float (the first turn starts from zero) and,
// but for the last turn, stores it back; BARRIER (a bar.sync, or nothing); thread 0 runs RELEASE
// (the flag becomes turn + 1; %r7 holds it). The last turn writes the sums to the output:
// out[t] = n (n + 1) / 2 + n t for n CTAs.
std::string splitk(const std::string& name, const std::string& acquire, const std::string& after, const std::string& release,
                   bool barrier = true, bool reverse = false) {
  std::string k = ".visible .entry NAME(.param .u64 ws, .param .u64 flag, .param .u64 out)\n{\n"
                  "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<16>;\n"
                  "  ld.param.u64 %rd1, [ws];\n  ld.param.u64 %rd2, [flag];\n  ld.param.u64 %rd3, [out];\n"
                  "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %nctaid.x;\n"
                  "  add.u32 %r6, %r3, -1;\n" +
                  std::string(reverse ? "  sub.u32 %r2, %r6, %r2;\n" : "") +
                  "  mul.wide.u32 %rd4, %r1, 4;\n  add.u64 %rd5, %rd1, %rd4;\n  add.u64 %rd6, %rd3, %rd4;\n"
                  "  add.u32 %r4, %r2, 1;\n  add.u32 %r4, %r4, %r1;\n  cvt.rn.f32.u32 %f1, %r4;\n"
                  "  add.u32 %r7, %r2, 1;\n"
                  "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra WAITED;\n"
                  "SPIN:\nACQUIRE  setp.ne.u32 %p2, %r5, %r2;\n  @%p2 bra SPIN;\nAFTER"
                  "WAITED:\n  bar.sync 0;\n"
                  "  mov.f32 %f2, 0f00000000;\n  setp.eq.u32 %p3, %r2, 0;\n  @%p3 bra ADD;\n  ld.global.f32 %f2, [%rd5];\n"
                  "ADD:\n  add.f32 %f3, %f2, %f1;\n  setp.eq.u32 %p4, %r2, %r6;\n  @%p4 bra LAST;\n"
                  "  st.global.f32 [%rd5], %f3;\nBARRIER  @%p1 bra DONE;\nRELEASE  bra DONE;\n"
                  "LAST:\n  st.global.f32 [%rd6], %f3;\nDONE:\n  ret;\n}\n";
  replace(k, "NAME", name);
  replace(k, "ACQUIRE", acquire);
  replace(k, "AFTER", after);
  replace(k, "RELEASE", release);
  replace(k, "BARRIER", barrier ? "  bar.sync 0;\n" : "");
  return k;
}

struct SplitK : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  std::uint64_t ws = 0, flag = 0, out = 0;

  void SetUp() override {
    const std::string ld_acquire = "  ld.acquire.gpu.global.u32 %r5, [%rd2];\n";
    const std::string st_release = "  st.release.gpu.global.u32 [%rd2], %r7;\n";
    m = &dev.load(std::string(kHeader) +
                  // correct: a release store observed by an acquire load (8.8, first forms)
                  splitk("release_acquire", ld_acquire, "", st_release) +
                  // correct: a release reduction (red.release.gpu: the flag goes from turn to turn + 1)
                  splitk("red_release", ld_acquire, "", "  red.release.gpu.global.add.u32 [%rd2], 1;\n") +
                  // correct: fence.acq_rel + relaxed store / relaxed loads + fence (8.8, third forms)
                  splitk("fence_relaxed", "  ld.relaxed.gpu.global.u32 %r5, [%rd2];\n", "  fence.acq_rel.gpu;\n",
                         "  fence.acq_rel.gpu;\n  st.relaxed.gpu.global.u32 [%rd2], %r7;\n") +
                  // correct: fence + relaxed atomics on both sides (an atom read that is no acquire,
                  // completed by the fence after the spin; a relaxed reduction after a fence)
                  splitk("fence_atomics", "  atom.relaxed.gpu.global.or.b32 %r5, [%rd2], 0;\n", "  fence.acq_rel.gpu;\n",
                         "  fence.acq_rel.gpu;\n  red.relaxed.gpu.global.add.u32 [%rd2], 1;\n") +
                  // correct: an acquiring atom in the spin
                  splitk("atom_acquire", "  atom.acquire.gpu.global.add.u32 %r5, [%rd2], 0;\n", "", st_release) +
                  // correct: the classic __threadfence() pattern (membar.gl = fence.sc.gpu; .volatile = relaxed.sys)
                  splitk("membar_volatile", "  ld.volatile.global.u32 %r5, [%rd2];\n", "  membar.gl;\n",
                         "  membar.gl;\n  st.volatile.global.u32 [%rd2], %r7;\n") +
                  // faulty: a relaxed flag with no fence: nothing releases the partial
                  splitk("relaxed_no_fence", ld_acquire, "", "  st.relaxed.gpu.global.u32 [%rd2], %r7;\n") +
                  // faulty: the flag at .cta scope: the CTAs' flag accesses are not morally strong
                  splitk("cta_scope", "  ld.acquire.cta.global.u32 %r5, [%rd2];\n", "", "  st.release.cta.global.u32 [%rd2], %r7;\n") +
                  // faulty: thread 0 releases before the CTA's other threads' partial stores are ordered
                  splitk("no_barrier", ld_acquire, "", st_release, false) +
                  // faulty: a weak flag (plain ld/st): no synchronization at all
                  splitk("weak_flag", "  ld.global.u32 %r5, [%rd2];\n", "", "  st.global.u32 [%rd2], %r7;\n") +
                  // the chain in reverse: CTA 0 waits on CTA n-1, the last to be dispatched
                  splitk("reverse", ld_acquire, "", st_release, true, true));
    ws = dev.memory().alloc(64 * 4);
    flag = dev.memory().alloc(4);
    out = dev.memory().alloc(64 * 4);
  }

  LaunchResult run(const char* name, std::uint64_t seed, std::uint32_t ctas = 4, std::uint32_t sms = 0) {
    std::memset(dev.memory().find(ws, 64 * 4), 0xFF, 64 * 4);
    std::memset(dev.memory().find(flag, 4), 0, 4);
    std::memset(dev.memory().find(out, 64 * 4), 0, 64 * 4);
    LaunchConfig c;
    c.block[0] = 64;
    c.grid[0] = ctas;
    c.seed = seed;
    c.detect_races = true;
    c.sms = sms;
    c.resident_ctas = sms ? 1 : 0;
    c.step_limit = 20'000;  // the kernels need at most a few thousand per CTA; a CTA spinning for ever ends in ms
    void* args[] = {&ws, &flag, &out};
    return dev.launch(*m, name, c, args);
  }

  bool sums_right(std::uint32_t n = 4) {
    const auto* o = reinterpret_cast<const float*>(dev.memory().find(out, 64 * 4));
    for (std::uint32_t t = 0; t < 64; ++t)
      if (o[t] != static_cast<float>(n * (n + 1) / 2 + n * t)) return false;
    return true;
  }
  // Clean and the sums right.
  int clean_seeds(const char* name, std::string* example, std::uint32_t ctas = 4, std::uint32_t sms = 0) {
    return count_seeds([&](std::uint64_t s) { return run(name, s, ctas, sms); },
                       [&](const LaunchResult& r) { return clean(r) && sums_right(ctas); }, example);
  }
};

TEST_F(SplitK, AReleaseStoreObservedByAnAcquireLoadIsClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("release_acquire", &example), kSeeds) << example;
}

TEST_F(SplitK, AReleaseReductionObservedByAnAcquireLoadIsClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("red_release", &example), kSeeds) << example;
}

TEST_F(SplitK, FencesWithRelaxedStoresLoadsAndAtomicsAreClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("fence_relaxed", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("fence_atomics", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("atom_acquire", &example), kSeeds) << example;
}

TEST_F(SplitK, MembarGlWithVolatileAccessesIsClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("membar_volatile", &example), kSeeds) << example;
}

// The flag is published with st.relaxed and no fence before it: a strong write, but no release
// pattern (8.8), so the next CTA's reads of the workspace are not ordered after the stores.
TEST_F(SplitK, ARelaxedFlagWithoutAFenceIsAReportedRace) {
  std::string example;
  auto found = [](const LaunchResult& r) { return message_has(r, ReportKind::Race, "of global bytes"); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("relaxed_no_fence", s); }, found, &example), kSeeds) << example;
}

// st.release.cta / ld.acquire.cta in different CTAs: neither scope includes the other thread,
// so they are not morally strong (8.7): no synchronization (8.9.4), and the flag itself races.
TEST_F(SplitK, AFlagAtCtaScopeIsAReportedRace) {
  std::string example;
  auto found = [](const LaunchResult& r) { return message_has(r, ReportKind::Race, "not morally strong"); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("cta_scope", s); }, found, &example), kSeeds) << example;
}

// The release covers what thread 0 knows: without the barrier, not the other threads' stores.
TEST_F(SplitK, AReleaseBeforeTheCtasStoresAreOrderedIsAReportedRace) {
  std::string example;
  auto found = [](const LaunchResult& r) { return message_has(r, ReportKind::Race, "of global bytes"); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("no_barrier", s); }, found, &example), kSeeds) << example;
}

// A kernel with no strong global access cannot wait for another cluster, so its clusters run
// one at a time in a seeded order (exec/launch.cc): when the flag's writer runs first, the weak
// flag races; otherwise the spin never ends, and the step-limit report says why.
TEST_F(SplitK, AWeakFlagIsAReportedRaceOrAHangThatSaysWhy) {
  std::string example;
  auto found = [](const LaunchResult& r) {
    return has(r, ReportKind::Race) || message_has(r, ReportKind::StepLimit, "so its clusters run one at a time");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("weak_flag", s); }, found, &example), kSeeds) << example;
}

// ---- Forward progress: what can be resident at once -----------------------------------------

// Four CTAs, at most two resident (two SMs, one CTA each): CTA 0 waits on CTA 3, which cannot
// start until a resident CTA exits. The spin ends at the step limit, and the report says why.
TEST_F(SplitK, ASpinOnACtaThatCannotBeResidentIsReported) {
  std::string example;
  auto found = [](const LaunchResult& r) {
    return !r.ok && message_has(r, ReportKind::StepLimit, "2 more clusters of the grid cannot start until a resident one exits") &&
           message_has(r, ReportKind::StepLimit, "at most 2 clusters are resident at once");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("reverse", s, 4, 2); }, found, &example), kSeeds) << example;
}

// The same chain as a persistent grid (no more CTAs than can be resident) completes; so does
// the forward chain with two resident, each CTA waiting only on one dispatched before it.
TEST_F(SplitK, APersistentGridWhoseCtasWaitOnEachOtherPasses) {
  std::string example;
  EXPECT_EQ(clean_seeds("reverse", &example, 4, 4), kSeeds) << example;
  EXPECT_EQ(clean_seeds("reverse", &example, 4), kSeeds) << example;  // 132 SMs
  EXPECT_EQ(clean_seeds("release_acquire", &example, 4, 2), kSeeds) << example;
}

// ---- The async proxy: a TMA load of what another CTA stored; a TMA store another CTA reads -----

// Two CTAs of 64 threads. CTA 0's threads store 8 bytes each of a 16 x 16 bf16 tile (512 bytes)
// with generic st.global; a barrier; thread 0 runs WFENCE and releases the flag. CTA 1's thread
// 0 acquires it, runs IFENCE and TMA-loads the tile; every thread copies its 8 bytes out.
std::string tma_reader(const std::string& name, const std::string& writer_fence, const std::string& issuer_fence) {
  std::string k = ".visible .entry NAME(.param .align 128 .b8 map[128], .param .u64 w, .param .u64 flag, .param .u64 out)\n{\n"
                  "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n"
                  "  .shared .align 128 .b8 tile[512];\n  .shared .align 8 .u64 bar;\n"
                  "  mov.b64 %rd1, map;\n  cvta.param.u64 %rd1, %rd1;\n  ld.param.u64 %rd2, [w];\n  ld.param.u64 %rd3, [flag];\n"
                  "  ld.param.u64 %rd4, [out];\n  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, bar;\n  mov.u32 %r3, tile;\n  mov.u32 %r4, 0;\n"
                  "  mul.wide.u32 %rd5, %r1, 8;\n  setp.ne.u32 %p1, %r1, 0;\n  mov.u32 %r6, %ctaid.x;\n"
                  "  setp.ne.u32 %p5, %r6, 0;\n  @%p5 bra READER;\n"
                  "  add.u64 %rd6, %rd2, %rd5;\n  cvt.u64.u32 %rd7, %r1;\n  st.global.u64 [%rd6], %rd7;\n  bar.sync 0;\n"
                  "  @%p1 bra DONE;\nWFENCE  mov.u32 %r7, 1;\n  st.release.gpu.global.u32 [%rd3], %r7;\n  bra DONE;\n"
                  "READER:\n  @%p1 bra SYNC;\n  mbarrier.init.shared::cta.b64 [%r2], 1;\n"
                  "SPIN:\n  ld.acquire.gpu.global.u32 %r5, [%rd3];\n  setp.ne.u32 %p2, %r5, 1;\n  @%p2 bra SPIN;\nIFENCE"
                  "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 512;\n"
                  "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r4, %r4}], [%r2];\n"
                  "SYNC:\n  bar.sync 0;\n"
                  "WAIT:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 0;\n  @!%p3 bra WAIT;\n"
                  "  cvt.u32.u64 %r8, %rd5;\n  add.u32 %r9, %r3, %r8;\n  ld.shared.u64 %rd8, [%r9];\n"
                  "  add.u64 %rd9, %rd4, %rd5;\n  st.global.u64 [%rd9], %rd8;\nDONE:\n  ret;\n}\n";
  replace(k, "NAME", name);
  replace(k, "WFENCE", writer_fence);
  replace(k, "IFENCE", issuer_fence);
  return k;
}

// Two CTAs of 64 threads. CTA 0's threads write the tile into shared memory, fence it for the
// async proxy, and thread 0 TMA-stores it to global memory, then WAIT (a wait_group, or its
// .read form) and releases the flag. CTA 1's thread 0 acquires it; a barrier; every thread
// reads its 8 bytes of the stored tile with a generic load and copies them out.
std::string tma_writer(const std::string& name, const std::string& wait) {
  std::string k = ".visible .entry NAME(.param .align 128 .b8 map[128], .param .u64 w, .param .u64 flag, .param .u64 out)\n{\n"
                  "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n"
                  "  .shared .align 128 .b8 tile[512];\n"
                  "  mov.b64 %rd1, map;\n  cvta.param.u64 %rd1, %rd1;\n  ld.param.u64 %rd2, [w];\n  ld.param.u64 %rd3, [flag];\n"
                  "  ld.param.u64 %rd4, [out];\n  mov.u32 %r1, %tid.x;\n  mov.u32 %r3, tile;\n  mov.u32 %r4, 0;\n"
                  "  mul.wide.u32 %rd5, %r1, 8;\n  setp.ne.u32 %p1, %r1, 0;\n  mov.u32 %r6, %ctaid.x;\n"
                  "  setp.ne.u32 %p5, %r6, 0;\n  @%p5 bra READER;\n"
                  "  cvt.u32.u64 %r8, %rd5;\n  add.u32 %r9, %r3, %r8;\n  cvt.u64.u32 %rd7, %r1;\n  st.shared.u64 [%r9], %rd7;\n"
                  "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n  @%p1 bra DONE;\n"
                  "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r4, %r4}], [%r3];\n"
                  "  cp.async.bulk.commit_group;\nWAIT  mov.u32 %r7, 1;\n  st.release.gpu.global.u32 [%rd3], %r7;\n  bra DONE;\n"
                  "READER:\n  @%p1 bra SYNC;\n"
                  "SPIN:\n  ld.acquire.gpu.global.u32 %r5, [%rd3];\n  setp.ne.u32 %p2, %r5, 1;\n  @%p2 bra SPIN;\n"
                  "SYNC:\n  bar.sync 0;\n  add.u64 %rd6, %rd2, %rd5;\n  ld.global.u64 %rd8, [%rd6];\n"
                  "  add.u64 %rd9, %rd4, %rd5;\n  st.global.u64 [%rd9], %rd8;\nDONE:\n  ret;\n}\n";
  replace(k, "NAME", name);
  replace(k, "WAIT", wait);
  return k;
}

struct AsyncProxy : ::testing::Test {
  Device dev;
  LoadedModule* m = nullptr;
  alignas(64) std::uint8_t map[128];
  std::uint64_t w = 0, flag = 0, out = 0;

  void SetUp() override {
    const std::string fence = "  fence.proxy.async.global;\n";
    m = &dev.load(std::string(kHeader) + tma_reader("no_fence", "", "") + tma_reader("writer_fence", fence, "") +
                  tma_reader("issuer_fence", "", fence) + tma_reader("all_spaces_fence", "  fence.proxy.async;\n", "") +
                  tma_reader("shared_fence", "  fence.proxy.async.shared::cta;\n", "") +
                  tma_writer("wait_group", "  cp.async.bulk.wait_group 0;\n") +
                  tma_writer("wait_group_read", "  cp.async.bulk.wait_group.read 0;\n"));
    w = dev.memory().alloc(512);
    flag = dev.memory().alloc(4);
    out = dev.memory().alloc(512);
    std::uint64_t dims[2] = {16, 16}, strides[1] = {32};
    std::uint32_t box[2] = {16, 16}, es[2] = {1, 1};
    EXPECT_EQ(encode_tensor_map(map, 9 /*BFLOAT16*/, 2, w, dims, strides, box, es, 0, 0, 0), "");
  }

  LaunchResult run(const char* name, std::uint64_t seed) {
    std::memset(dev.memory().find(w, 512), 0, 512);
    std::memset(dev.memory().find(flag, 4), 0, 4);
    std::memset(dev.memory().find(out, 512), 0, 512);
    LaunchConfig c;
    c.block[0] = 64;
    c.grid[0] = 2;
    c.seed = seed;
    c.detect_races = true;
    c.step_limit = 200'000;
    void* args[] = {map, &w, &flag, &out};
    return dev.launch(*m, name, c, args);
  }
  bool copied() {
    const auto* o = reinterpret_cast<const std::uint64_t*>(dev.memory().find(out, 512));
    for (std::uint64_t t = 0; t < 64; ++t)
      if (o[t] != t) return false;
    return true;
  }
  int clean_seeds(const char* name, std::string* example) {
    return count_seeds([&](std::uint64_t s) { return run(name, s); }, [&](const LaunchResult& r) { return clean(r) && copied(); },
                       example);
  }
};

// The stores are ordered before the load's issue (barrier, release, acquire) but no proxy fence
// lies on the way: the async proxy may not see them (cp.async.bulk: "fence.proxy.async should be
// used to synchronize memory between generic proxy and the async proxy").
TEST_F(AsyncProxy, ATmaLoadOfAnotherCtasGenericStoresWithoutAProxyFenceIsReported) {
  std::string example;
  auto found = [](const LaunchResult& r) { return message_has(r, ReportKind::ProxyFence, "through the generic proxy"); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("no_fence", s); }, found, &example), kSeeds) << example;
  // A fence of shared memory only orders nothing in global memory.
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("shared_fence", s); }, found, &example), kSeeds) << example;
}

// The fence on the way: in the writing CTA after the barrier (a thread between the stores and
// the release: 8.9.5 "along the base causality path"), without a state space, or in the issuer
// after its acquire.
TEST_F(AsyncProxy, AProxyFenceOnTheWayFromTheStoresToTheLoadIsClean) {
  std::string example;
  EXPECT_EQ(clean_seeds("writer_fence", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("all_spaces_fence", &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("issuer_fence", &example), kSeeds) << example;
}

// wait_group.read says the store has read its source, not that its writes are done: the other
// CTA's loads race with them. wait_group (the completion, with its implicit proxy fence) is clean.
TEST_F(AsyncProxy, ATmaStoresResultIsReadableByAnotherCtaOnlyAfterItsCompletion) {
  std::string example;
  auto found = [](const LaunchResult& r) { return message_has(r, ReportKind::Race, "TMA store"); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("wait_group_read", s); }, found, &example), kSeeds) << example;
  EXPECT_EQ(clean_seeds("wait_group", &example), kSeeds) << example;
}

// ---- Atomics: morally strong accesses do not race; scopes must include both threads ---------

struct Atomics : ::testing::Test {
  Device dev;
  std::uint64_t counter = 0;

  // Every thread of `ctas` CTAs of 64 runs `body` on the counter (%rd1) and %r1 = 1.
  LaunchResult run(const std::string& body, std::uint64_t seed, std::uint32_t ctas = 4) {
    const std::string k = std::string(kHeader) + ".visible .entry k(.param .u64 c)\n{\n"
                          "  .reg .pred %p<4>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
                          "  .shared .align 4 .b32 sc;\n  .shared .align 4 .b32 data;\n"
                          "  ld.param.u64 %rd1, [c];\n  mov.u32 %r1, 1;\n  mov.u32 %r3, sc;\n  mov.u32 %r4, %tid.x;\n" +
                          body + "  ret;\n}\n";
    LoadedModule& m = dev.load(k);
    counter = dev.memory().alloc(4);
    std::memset(dev.memory().find(counter, 4), 0, 4);
    LaunchConfig c;
    c.block[0] = 64;
    c.grid[0] = ctas;
    c.seed = seed;
    c.detect_races = true;
    void* args[] = {&counter};
    LaunchResult r = dev.launch(m, "k", c, args);
    dev.unload(&m);
    return r;
  }
  std::uint32_t value() { return *reinterpret_cast<const std::uint32_t*>(dev.memory().find(counter, 4)); }
};

TEST_F(Atomics, ACounterEveryThreadOfFourCtasIncrementsIsClean) {
  std::string example;
  for (const char* body : {"  atom.global.add.u32 %r2, [%rd1], %r1;\n", "  red.global.add.u32 [%rd1], %r1;\n",
                           "  atom.relaxed.sys.global.inc.u32 %r2, [%rd1], 1000000;\n", "  red.release.gpu.add.u32 [%rd1], %r1;\n"}) {
    const std::string b = body;
    EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(b, s); }, [&](const LaunchResult& r) { return clean(r) && value() == 256; },
                          &example),
              kSeeds)
        << body << example;
  }
}

// Litmus test 2 of PTX ISA 8.10.3 (Atomicity): atom.cta from different CTAs are not morally
// strong, so not atomic with respect to each other: a data race.
TEST_F(Atomics, CtaScopedAtomicsFromDifferentCtasAreAReportedRace) {
  std::string example;
  auto found = [](const LaunchResult& r) { return message_has(r, ReportKind::Race, "not morally strong"); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("  atom.cta.global.add.u32 %r2, [%rd1], %r1;\n", s); }, found, &example),
            kSeeds)
      << example;
  // Within one CTA, .cta scope includes every thread: clean.
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run("  atom.cta.global.add.u32 %r2, [%rd1], %r1;\n", s, 1); }, clean, &example),
            kSeeds)
      << example;
}

// Shared memory follows the same model: two warps' atomics on one word are morally strong (they
// were reported as a race before); a weak store and an atomic are not.
TEST_F(Atomics, SharedMemoryAtomicsOfTwoWarpsAreCleanAndAWeakStoreAmongThemRaces) {
  std::string example;
  const std::string init = "  setp.eq.u32 %p1, %r4, 0;\n  @%p1 st.shared.u32 [%r3], 0;\n  bar.sync 0;\n";
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(init + "  atom.shared.add.u32 %r2, [%r3], %r1;\n", s, 1); }, clean, &example),
            kSeeds)
      << example;
  auto found = [](const LaunchResult& r) { return has(r, ReportKind::Race); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) {
              return run(init + "  atom.shared.add.u32 %r2, [%r3], %r1;\n  setp.eq.u32 %p2, %r4, 40;\n  @%p2 st.shared.u32 [%r3], 7;\n", s, 1);
            },
                        found, &example),
            kSeeds)
      << example;
}

// A flag in shared memory: warp 1 stores data, then releases the flag; warp 0's lane 0 spins on
// it with an acquire load and reads the data. With a relaxed store instead, the read races.
TEST_F(Atomics, ASharedFlagReleasedAndAcquiredOrdersTheDataAndARelaxedOneDoesNot) {
  auto body = [](const char* publish) {
    return std::string("  mov.u32 %r5, data;\n  setp.eq.u32 %p1, %r4, 0;\n  setp.eq.u32 %p2, %r4, 32;\n"
                       "  @%p1 st.shared.u32 [%r3], 0;\n  bar.sync 0;\n"
                       "  @!%p2 bra READ;\n  st.shared.u32 [%r5], 42;\n  ") +
           publish +
           " [%r3], %r1;\n  bra END;\nREAD:\n  @!%p1 bra END;\n"
           "SPIN:\n  ld.acquire.cta.shared.u32 %r6, [%r3];\n  setp.ne.u32 %p3, %r6, 1;\n  @%p3 bra SPIN;\n"
           "  ld.shared.u32 %r7, [%r5];\n  st.global.u32 [%rd1], %r7;\nEND:\n";
  };
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(body("st.release.cta.shared.u32"), s, 1); },
                        [&](const LaunchResult& r) { return clean(r) && value() == 42; }, &example),
            kSeeds)
      << example;
  auto found = [](const LaunchResult& r) { return has(r, ReportKind::Race); };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(body("st.relaxed.cta.shared.u32"), s, 1); }, found, &example), kSeeds)
      << example;
}

}  // namespace
}  // namespace mgpu::emu
