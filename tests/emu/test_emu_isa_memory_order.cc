// Spec tests for the memory order of ld / st / atom / red and for membar / fence
// (core/emu/check/memory_order.h, check/memory_model.h, insns/data.cc, insns/barrier.cc), each
// expectation taken from the PTX ISA text cited beside it:
//   - 8.4 Operation types: ld/st are weak unless .relaxed/.acquire/.release/.volatile/.mmio;
//     8.4.2: .volatile is "a relaxed memory operation with system-scope"; 8.4.1: .mmio is strong.
//   - "atom": "If the .sem qualifier is absent, .relaxed is assumed by default", "If the .scope
//     qualifier is absent, .gpu scope is assumed by default"; "red": likewise, .sem only
//     .relaxed or .release. The values atom/red compute do not depend on .sem/.scope.
//   - membar/fence: "fence{.sem}.scope", "If the optional .sem qualifier is absent, .acq_rel is
//     assumed by default", "membar levels cta, gl and sys are synonymous with the fence scopes
//     cta, gpu and sys", membar "a synonym for fence.sc".
//   - 8.7 morally strong, 8.8 release and acquire patterns ("while atomic reductions
//     conceptually perform a strong read ..., this strong read does not form an acquire
//     pattern"), 8.9.2 observation order (through atomic read-modify-writes), 8.9.3/8.9.4
//     fence.sc order: as the race verdicts of small kernels and of the memory model itself.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "core/emu/check/memory_model.h"
#include "core/emu/check/memory_order.h"
#include "isa_harness.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;

ptx::Instruction insn(const std::string& opcode) {
  ptx::Instruction p;
  p.opcode = opcode;
  for (std::size_t at = 0;;) {
    const std::size_t dot = opcode.find('.', at);
    p.parts.push_back(opcode.substr(at, dot == std::string::npos ? std::string::npos : dot - at));
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  return p;
}

MemOrder order(const std::string& opcode, bool atomic) {
  MemOrder o;
  EXPECT_EQ(parse_order(insn(opcode), atomic, o), "") << opcode;
  return o;
}

std::string refused(const std::string& opcode, bool atomic) {
  MemOrder o;
  return parse_order(insn(opcode), atomic, o);
}

TEST(MemoryOrder, LdAndStAreWeakUnlessQualified) {
  EXPECT_FALSE(order("ld.global.u32", false).strong);
  EXPECT_FALSE(order("ld.weak.global.u32", false).strong);
  EXPECT_FALSE(order("st.shared.v4.u32", false).strong);
  EXPECT_FALSE(order("ld.global.nc.u32", false).strong);  // 8.1: .nc is outside the model
  const MemOrder a = order("ld.acquire.gpu.global.u32", false);
  EXPECT_TRUE(a.strong && a.acquire && !a.release && a.scope == Scope::Gpu);
  const MemOrder r = order("st.release.cluster.global.u32", false);
  EXPECT_TRUE(r.strong && r.release && !r.acquire && r.scope == Scope::Cluster);
  const MemOrder x = order("ld.relaxed.cta.shared.u32", false);
  EXPECT_TRUE(x.strong && !x.acquire && !x.release && x.scope == Scope::Cta);
  // 8.4.2 and 8.4.1: relaxed at system scope.
  for (const char* v : {"ld.volatile.global.u32", "st.volatile.shared.u64", "ld.mmio.relaxed.sys.global.u32"}) {
    const MemOrder o = order(v, false);
    EXPECT_TRUE(o.strong && !o.acquire && !o.release && o.scope == Scope::Sys) << v;
  }
}

TEST(MemoryOrder, AtomAndRedDefaultToRelaxedAtGpuScope) {
  for (const char* d : {"atom.global.add.u32", "red.global.add.u32", "atom.shared::cta.cas.b32", "red.add.f32"}) {
    const MemOrder o = order(d, true);
    EXPECT_TRUE(o.strong && !o.acquire && !o.release && o.scope == Scope::Gpu) << d;
  }
  const MemOrder ar = order("atom.acq_rel.sys.global.exch.b32", true);
  EXPECT_TRUE(ar.acquire && ar.release && ar.scope == Scope::Sys);
  const MemOrder aq = order("atom.acquire.cta.global.add.u32", true);
  EXPECT_TRUE(aq.acquire && !aq.release && aq.scope == Scope::Cta);
  const MemOrder rr = order("red.release.cluster.global.add.u32", true);
  EXPECT_TRUE(rr.release && !rr.acquire && rr.scope == Scope::Cluster);
}

TEST(MemoryOrder, FormsTheIsaDoesNotDefineAreRefused) {
  EXPECT_NE(refused("ld.relaxed.global.u32", false), "");        // .sem needs a scope
  EXPECT_NE(refused("ld.gpu.global.u32", false), "");            // a scope needs a .sem
  EXPECT_NE(refused("st.acquire.gpu.global.u32", false), "");    // st has no acquire
  EXPECT_NE(refused("ld.release.gpu.global.u32", false), "");    // ld has no release
  EXPECT_NE(refused("ld.acq_rel.gpu.global.u32", false), "");
  EXPECT_NE(refused("ld.volatile.acquire.gpu.global.u32", false), "");
  EXPECT_NE(refused("red.acquire.gpu.global.add.u32", true), "");  // red: .relaxed or .release
  EXPECT_NE(refused("red.acq_rel.gpu.global.add.u32", true), "");
  EXPECT_NE(refused("atom.relaxed.acquire.global.add.u32", true), "");
  EXPECT_NE(refused("atom.cta.gpu.global.add.u32", true), "");
}

// The decoder refuses them in PTX too, naming the instruction.
TEST_F(Isa, UndefinedMemoryOrdersAndFencesWithoutAScopeAreUnsupported) {
  for (const char* b : {"  ld.relaxed.global.u32 %r1, [%rd62];\n", "  st.acquire.gpu.global.u32 [%rd63], %r1;\n",
                        "  red.acquire.gpu.global.add.u32 [%rd63], 1;\n", "  fence.acq_rel;\n", "  fence.sc;\n"}) {
    try {
      dev.load(module(b));
      ADD_FAILURE() << "accepted: " << b;
    } catch (const Fault& f) {
      EXPECT_EQ(f.report.kind, ReportKind::Unsupported) << b;
    }
  }
}

// Strong loads and stores move the same bytes as weak ones (8.4: the qualifiers are about order).
TEST_F(Isa, StrongLoadsAndStoresMoveTheirBytes) {
  auto o = run(
      "  ld.relaxed.gpu.global.u32 %r1, [%rd62];\n  st.relaxed.sys.global.u32 [%rd63], %r1;\n"
      "  ld.acquire.cluster.global.u64 %rd1, [%rd62+8];\n  st.release.gpu.global.u64 [%rd63+8], %rd1;\n"
      "  ld.volatile.global.u32 %r2, [%rd62+16];\n  st.volatile.global.u32 [%rd63+16], %r2;\n"
      "  ld.mmio.relaxed.sys.global.u32 %r3, [%rd62+24];\n  st.mmio.relaxed.sys.global.u32 [%rd63+24], %r3;\n"
      "  ld.acquire.cta.u32 %r4, [%rd62+32];\n  st.release.cta.u32 [%rd63+32], %r4;\n",  // generic addressing
      {0x11, 0x2222222222ull, 0x33, 0x44, 0x55}, 5);
  EXPECT_EQ(o[0], 0x11u);
  EXPECT_EQ(o[1], 0x2222222222ull);
  EXPECT_EQ(o[2], 0x33u);
  EXPECT_EQ(o[3], 0x44u);
  EXPECT_EQ(o[4], 0x55u);
}

// atom / red compute the same values whatever their .sem and .scope ("atom", Semantics).
TEST_F(Isa, AtomAndRedWithSemAndScopeComputeTheIsaValues) {
  struct Case {
    const char* insn;
    std::uint32_t old, ret, after;
  };
  const Case cases[] = {
      {"atom.acquire.gpu.global.add.u32 %r4, [%rd62], 7;", 5, 5, 12},
      {"atom.release.sys.global.exch.b32 %r4, [%rd62], 9;", 5, 5, 9},
      {"atom.acq_rel.cta.global.cas.b32 %r4, [%rd62], 5, 77;", 5, 5, 77},
      {"atom.relaxed.cluster.global.inc.u32 %r4, [%rd62], 3;", 3, 3, 0},  // (old >= b) ? 0 : old+1
      {"atom.acquire.global.dec.u32 %r4, [%rd62], 5;", 0, 0, 5},          // (old == 0 || old > b) ? b : old-1
      {"atom.sys.global.max.s32 %r4, [%rd62], -3;", 0xFFFFFFF0u, 0xFFFFFFF0u, 0xFFFFFFFDu},
      {"atom.acq_rel.gpu.add.u32 %r4, [%rd62], 1;", 41, 41, 42},          // generic addressing
  };
  for (const Case& c : cases) {
    auto o = run(std::string("  ") + c.insn + "\n  ld.global.u32 %r5, [%rd62];\n  st.global.u32 [%rd63], %r4;\n  st.global.u32 [%rd63+8], %r5;\n",
                 {c.old}, 2);
    EXPECT_EQ(o[0], c.ret) << c.insn;
    EXPECT_EQ(o[1], c.after) << c.insn;
  }
  const char* reds[] = {"red.release.gpu.global.add.u32 [%rd62], 5;", "red.relaxed.cta.global.add.u32 [%rd62], 5;",
                        "red.release.sys.add.u32 [%rd62], 5;", "red.relaxed.cluster.global.or.b32 [%rd62], 4;"};
  const std::uint32_t after[] = {15, 15, 15, 14};
  for (int i = 0; i < 4; ++i) {
    auto o = run(std::string("  ") + reds[i] + "\n  ld.global.u32 %r5, [%rd62];\n  st.global.u32 [%rd63], %r5;\n", {10}, 1);
    EXPECT_EQ(o[0], after[i]) << reds[i];
  }
  // Shared memory, .shared::cta with a scope.
  auto o = run("  st.shared.u32 [sm], 6;\n  atom.release.cta.shared::cta.add.u32 %r1, [sm], 2;\n"
               "  red.relaxed.cta.shared.add.u32 [sm], 1;\n  ld.shared.u32 %r2, [sm];\n"
               "  st.global.u32 [%rd63], %r1;\n  st.global.u32 [%rd63+8], %r2;\n",
               {0}, 2, cfg(), ".shared .align 8 .b8 sm[8];");
  EXPECT_EQ(o[0], 6u);
  EXPECT_EQ(o[1], 9u);
}

// Every fence form decodes and runs; none of them changes a value.
TEST_F(Isa, FenceAndMembarFormsRun) {
  for (const char* f : {"fence.sc.cta;", "fence.sc.cluster;", "fence.sc.gpu;", "fence.sc.sys;", "fence.acq_rel.cta;", "fence.acq_rel.gpu;",
                        "fence.gpu;", "fence.acquire.gpu;", "fence.release.cluster;", "membar.cta;", "membar.gl;", "membar.sys;",
                        "fence.proxy.async;", "fence.proxy.async.global;", "fence.proxy.async.shared::cta;", "fence.proxy.alias;",
                        "fence.proxy.tensormap::generic.release.gpu;", "fence.mbarrier_init.release.cluster;",
                        "fence.acquire.sync_restrict::shared::cluster.cluster;", "fence.release.sync_restrict::shared::cta.cluster;"}) {
    LaunchConfig c = cfg();
    c.detect_races = true;
    auto o = run(std::string("  ld.global.u32 %r1, [%rd62];\n  ") + f + "\n  st.global.u32 [%rd63], %r1;\n", {0x5A}, 1, c);
    EXPECT_EQ(o[0], 0x5Au) << f;
  }
}

// ---- Release and acquire patterns as race verdicts, in kernels of a few CTAs -----------------

// CTA 0 (thread 0) stores 42 to `data` and publishes the flag with PUB; CTA 1 (or every other
// CTA) spins with SPIN (loading the flag into %r5) until it is 1, runs AFTER and reads `data`.
struct Patterns : IsaTest {
  LaunchResult launch(const std::string& pub, const std::string& spin, const std::string& after, std::uint64_t seed,
                      std::uint32_t cluster = 1, const std::string& middle = "") {
    std::string body = "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %tid.x;\n  setp.ne.u32 %p1, %r2, 0;\n  @%p1 bra END;\n"
                       "  add.u64 %rd1, %rd62, 8;\n  setp.ne.u32 %p2, %r1, 0;\n  @%p2 bra READER;\n"
                       "  mov.u32 %r3, 42;\n  st.global.u32 [%rd1], %r3;\n  mov.u32 %r4, 1;\n" + pub +
                       "  bra END;\nREADER:\n" + middle + "SPIN:\n" + spin + "  setp.ne.u32 %p3, %r5, 1;\n  @%p3 bra SPIN;\n" + after +
                       "  ld.global.u32 %r6, [%rd1];\n  st.global.u32 [%rd63], %r6;\nEND:\n";
    LoadedModule& m = dev.load(module(body));
    std::uint64_t din = dev.memory().alloc(16), dout = dev.memory().alloc(8);
    std::memset(dev.memory().find(din, 16), 0, 16);
    LaunchConfig c = cfg(32, 2, seed);
    c.cluster[0] = cluster;
    c.detect_races = true;
    c.step_limit = 100'000;
    void* args[] = {&din, &dout};
    LaunchResult r = dev.launch(m, "k", c, args);
    dev.unload(&m);
    return r;
  }
  int clean_seeds(const std::string& pub, const std::string& spin, const std::string& after, std::uint32_t cluster = 1, int seeds = 50) {
    int n = 0;
    for (int s = 1; s <= seeds; ++s) n += emu_test::clean(launch(pub, spin, after, static_cast<std::uint64_t>(s), cluster));
    return n;
  }
  int raced_seeds(const std::string& pub, const std::string& spin, const std::string& after, std::uint32_t cluster = 1, int seeds = 50) {
    int n = 0;
    for (int s = 1; s <= seeds; ++s) n += emu_test::has(launch(pub, spin, after, static_cast<std::uint64_t>(s), cluster), ReportKind::Race);
    return n;
  }
};

const char* kRelease = "  st.release.gpu.global.u32 [%rd62], %r4;\n";
const char* kAcquire = "  ld.acquire.gpu.global.u32 %r5, [%rd62];\n";
const char* kRelaxedLoad = "  ld.relaxed.gpu.global.u32 %r5, [%rd62];\n";

// 8.8, first forms: a release operation observed by an acquire operation.
TEST_F(Patterns, ReleaseObservedByAcquireOrders) { EXPECT_EQ(clean_seeds(kRelease, kAcquire, ""), 50); }

// 8.8: "a strong read on M followed by an acquire memory fence"; fence.acquire, fence.acq_rel,
// fence.sc (and membar.gl) are acquire fences.
TEST_F(Patterns, RelaxedReadFollowedByAnAcquireFenceOrders) {
  for (const char* f : {"  fence.acquire.gpu;\n", "  fence.acq_rel.gpu;\n", "  fence.sc.gpu;\n", "  membar.gl;\n", "  fence.sys;\n"})
    EXPECT_EQ(clean_seeds(kRelease, kRelaxedLoad, f), 50) << f;
}

// ... but a release-only fence is no acquire fence, and no fence at all leaves the read unordered.
TEST_F(Patterns, RelaxedReadWithoutAnAcquireFenceDoesNotOrder) {
  EXPECT_EQ(raced_seeds(kRelease, kRelaxedLoad, ""), 50);
  EXPECT_EQ(raced_seeds(kRelease, kRelaxedLoad, "  fence.release.gpu;\n"), 50);
}

// 8.8: "a release or acquire-release memory fence followed by a strong write on M"; an
// acquire-only fence is none.
TEST_F(Patterns, FenceFollowedByAStrongWriteReleases) {
  for (const char* f : {"  fence.release.gpu;\n", "  fence.acq_rel.gpu;\n", "  fence.sc.gpu;\n", "  membar.sys;\n"})
    EXPECT_EQ(clean_seeds(std::string(f) + "  st.relaxed.gpu.global.u32 [%rd62], %r4;\n", kAcquire, ""), 50) << f;
  EXPECT_EQ(clean_seeds("  fence.acq_rel.gpu;\n  atom.relaxed.gpu.global.exch.b32 %r7, [%rd62], %r4;\n", kAcquire, ""), 50);
  EXPECT_EQ(raced_seeds("  fence.acquire.gpu;\n  st.relaxed.gpu.global.u32 [%rd62], %r4;\n", kAcquire, ""), 50);
  // .volatile is relaxed: it releases nothing by itself (8.4.2).
  EXPECT_EQ(raced_seeds("  st.volatile.global.u32 [%rd62], %r4;\n", kAcquire, ""), 50);
}

// 8.9.4: "the first operation in X and the last operation in Y are morally strong": a fence of
// .cta scope in the reading CTA does not include the writer (another CTA).
TEST_F(Patterns, AFenceWhoseScopeExcludesTheWriterDoesNotOrder) {
  EXPECT_EQ(raced_seeds(kRelease, kRelaxedLoad, "  fence.acq_rel.cta;\n"), 50);
  EXPECT_EQ(raced_seeds("  fence.acq_rel.cta;\n  st.relaxed.gpu.global.u32 [%rd62], %r4;\n", kAcquire, ""), 50);
}

// .cluster scope includes the other CTA of a 2-CTA cluster, not a CTA of another cluster.
TEST_F(Patterns, ClusterScopeOrdersWithinAClusterOnly) {
  const std::string rel = "  st.release.cluster.global.u32 [%rd62], %r4;\n", acq = "  ld.acquire.cluster.global.u32 %r5, [%rd62];\n";
  EXPECT_EQ(clean_seeds(rel, acq, "", 2), 50);
  EXPECT_EQ(raced_seeds(rel, acq, "", 1), 50);
}

// 8.8: "atomic reductions conceptually perform a strong read ..., this strong read does not form
// an acquire pattern" -- but an atom's read does, with a fence after it, and so does an
// acquiring atom.
TEST_F(Patterns, AnAtomsReadFormsAnAcquirePattern) {
  EXPECT_EQ(clean_seeds(kRelease, "  atom.relaxed.gpu.global.add.u32 %r5, [%rd62], 0;\n", "  fence.acq_rel.gpu;\n"), 50);
  EXPECT_EQ(clean_seeds(kRelease, "  atom.acquire.gpu.global.or.b32 %r5, [%rd62], 0;\n", ""), 50);
  EXPECT_EQ(raced_seeds(kRelease, "  atom.relaxed.gpu.global.add.u32 %r5, [%rd62], 0;\n", ""), 50);
}

// 8.9.2: observation passes through atomic read-modify-writes of the flag (a release sequence):
// CTA 1 moves the flag on from 1 to 2 and then says so through a relaxed `go` word (no
// synchronization); CTA 2 waits for `go`, then reads the flag (2) with one acquire load and reads
// the data. With a relaxed atomic add in CTA 1 the acquire observes CTA 0's release through it;
// a plain strong store ends the sequence, and the data read races.
TEST_F(Patterns, ObservationPassesThroughReadModifyWritesOnly) {
  auto run3 = [&](const std::string& bump, std::uint64_t seed) {
    const std::string body =
        "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %tid.x;\n  setp.ne.u32 %p1, %r2, 0;\n  @%p1 bra END;\n  add.u64 %rd1, %rd62, 8;\n"
        "  add.u64 %rd2, %rd62, 4;\n  setp.eq.u32 %p2, %r1, 1;\n  @%p2 bra BUMP;\n  setp.eq.u32 %p2, %r1, 2;\n  @%p2 bra READ;\n"
        "  mov.u32 %r3, 42;\n  st.global.u32 [%rd1], %r3;\n  mov.u32 %r4, 1;\n  st.release.gpu.global.u32 [%rd62], %r4;\n  bra END;\n"
        "BUMP:\n  ld.relaxed.gpu.global.u32 %r5, [%rd62];\n  setp.ne.u32 %p3, %r5, 1;\n  @%p3 bra BUMP;\n" + bump +
        "  mov.u32 %r8, 1;\n  st.relaxed.gpu.global.u32 [%rd2], %r8;\n  bra END;\n"
        "READ:\n  ld.relaxed.gpu.global.u32 %r5, [%rd2];\n  setp.ne.u32 %p3, %r5, 1;\n  @%p3 bra READ;\n"
        "  ld.acquire.gpu.global.u32 %r5, [%rd62];\n  ld.global.u32 %r6, [%rd1];\n  st.global.u32 [%rd63], %r6;\n"
        "  st.global.u32 [%rd63+4], %r5;\nEND:\n";
    LoadedModule& m = dev.load(module(body));
    std::uint64_t din = dev.memory().alloc(16), dout = dev.memory().alloc(8);
    std::memset(dev.memory().find(din, 16), 0, 16);
    LaunchConfig c = cfg(32, 3, seed);
    c.detect_races = true;
    c.step_limit = 100'000;
    void* args[] = {&din, &dout};
    LaunchResult r = dev.launch(m, "k", c, args);
    std::uint32_t o[2];
    std::memcpy(o, dev.memory().find(dout, 8), 8);
    EXPECT_EQ(o[1], 2u) << "the acquire read the flag after the bump";
    dev.unload(&m);
    return r;
  };
  for (std::uint64_t s = 1; s <= 50; ++s) {
    LaunchResult ok = run3("  atom.relaxed.gpu.global.add.u32 %r7, [%rd62], 1;\n", s);
    EXPECT_TRUE(emu_test::clean(ok)) << "seed " << s << "\n" << emu_test::all(ok);
    LaunchResult bad = run3("  mov.u32 %r7, 2;\n  st.relaxed.gpu.global.u32 [%rd62], %r7;\n", s);
    EXPECT_TRUE(emu_test::has(bad, ReportKind::Race)) << "seed " << s << "\n" << emu_test::all(bad);
  }
}

// 8.8: "a strong read on M followed by an acquire operation on M": the relaxed spin observed the
// release, the acquire load after it (even of the same value) completes the pattern.
TEST_F(Patterns, ARelaxedReadFollowedByAnAcquireOfTheSameLocationOrders) {
  EXPECT_EQ(clean_seeds(kRelease, kRelaxedLoad, "  ld.acquire.gpu.global.u32 %r9, [%rd62];\n"), 50);
  EXPECT_EQ(raced_seeds(kRelease, kRelaxedLoad, "  ld.acquire.gpu.global.u32 %r9, [%rd62+4];\n"), 50);  // another location
}

// ---- The memory model itself (check/memory_model.h): two clusters of one 32-thread CTA -------

struct Model : ::testing::Test {
  RaceDetector a{1, 32, 0, 0}, b{1, 32, 0, 1}, c{1, 32, 0, 2};
  MemoryModel mm{32};
  MemoryModel::Thread ta{&a, 0}, tb{&b, 0}, tc{&c, 0};

  MemoryModel::Conflict access(const MemoryModel::Thread& t, std::uint64_t addr, std::uint32_t bytes, bool write,
                               std::uint16_t order = 0) {
    MemoryModel::Access x;
    x.addr = addr;
    x.bytes = bytes;
    x.read = !write;
    x.write = write;
    x.order = order;
    return mm.access(t, x);
  }
  static MemOrder strong(Scope s, bool acq = false, bool rel = false) { return MemOrder{true, acq, rel, s}; }
};

constexpr std::uint64_t kData = 0x1000, kFlag = 0x2000;

TEST_F(Model, UnorderedWeakAccessesOfTwoClustersRace) {
  EXPECT_FALSE(access(ta, kData, 4, true).found());
  const MemoryModel::Conflict k = access(tb, kData, 4, false);
  ASSERT_TRUE(k.found());
  EXPECT_EQ(k.kind, MemoryModel::Conflict::Race);
  EXPECT_TRUE(k.earlier_was_write);
  EXPECT_EQ(k.serial, 0u);
}

// 8.7: strong accesses of one location whose scopes include each other do not race; a partial
// overlap, or a .cta scope across CTAs, does.
TEST_F(Model, MorallyStrongAccessesDoNotRace) {
  const std::uint16_t gpu4 = order_bits::make(true, Scope::Gpu, 0, 4), gpu8 = order_bits::make(true, Scope::Gpu, 0, 8),
                      cta4 = order_bits::make(true, Scope::Cta, 0, 4);
  access(ta, kData, 4, true, gpu4);
  EXPECT_FALSE(access(tb, kData, 4, false, gpu4).found());
  EXPECT_TRUE(access(tb, kData, 8, true, gpu8).found());  // not the same location
  access(ta, kData + 16, 4, true, gpu4);
  EXPECT_TRUE(access(tb, kData + 16, 4, false, cta4).found());
}

// 8.9.3/8.9.4: fence.sc operations synchronize in the order they run, when morally strong.
TEST_F(Model, FenceScOrderSynchronizesMorallyStrongFences) {
  access(ta, kData, 4, true);
  mm.fence(ta, Scope::Gpu, true, true, true);
  mm.fence(tb, Scope::Gpu, true, true, true);
  EXPECT_FALSE(access(tb, kData, 4, false).found());
  // A .cta fence.sc does not include a thread of another CTA.
  access(ta, kData + 8, 4, true);
  mm.fence(ta, Scope::Cta, true, true, true);
  mm.fence(tc, Scope::Gpu, true, true, true);
  EXPECT_TRUE(access(tc, kData + 8, 4, false).found());
  // The reader's fence before the writer's orders nothing for the write.
  mm.fence(tc, Scope::Gpu, true, true, true);
  access(ta, kData + 16, 4, true);
  mm.fence(ta, Scope::Gpu, true, true, true);
  EXPECT_TRUE(access(tc, kData + 16, 4, false).found());
}

// 8.8: red's read forms no acquire pattern; an atom's does.
TEST_F(Model, ARedFollowedByAFenceAcquiresNothing) {
  access(ta, kData, 4, true);
  mm.strong_access(ta, kFlag, 4, strong(Scope::Gpu, false, true), false, true, false);  // st.release
  mm.strong_access(tb, kFlag, 4, strong(Scope::Gpu), false, true, true);                // red.relaxed
  mm.fence(tb, Scope::Gpu, true, false, false);
  EXPECT_TRUE(access(tb, kData, 4, false).found());
  mm.strong_access(tc, kFlag, 4, strong(Scope::Gpu), true, true, true);  // atom.relaxed (after b's red: the sequence goes on)
  mm.fence(tc, Scope::Gpu, true, false, false);
  EXPECT_FALSE(access(tc, kData, 4, false).found());
}

// Synchronization is transitive across clusters (8.9.5: base causality order is transitive):
// a -> b -> c through two flags orders a's write before c's read.
TEST_F(Model, KnowledgeTravelsThroughAChainOfClusters) {
  access(ta, kData, 4, true);
  mm.strong_access(ta, kFlag, 4, strong(Scope::Gpu, false, true), false, true, false);
  mm.strong_access(tb, kFlag, 4, strong(Scope::Gpu, true), true, false, false);
  mm.strong_access(tb, kFlag + 8, 4, strong(Scope::Gpu, false, true), false, true, false);
  mm.strong_access(tc, kFlag + 8, 4, strong(Scope::Gpu, true), true, false, false);
  EXPECT_FALSE(access(tc, kData, 4, false).found());
}

// A weak write to the flag ends its release sequence: the acquire that reads it gets nothing.
TEST_F(Model, AWeakWriteEndsTheReleaseSequence) {
  access(ta, kData, 4, true);
  mm.strong_access(ta, kFlag, 4, strong(Scope::Gpu, false, true), false, true, false);
  mm.invalidate(kFlag, 4);
  mm.strong_access(tb, kFlag, 4, strong(Scope::Gpu, true), true, false, false);
  EXPECT_TRUE(access(tb, kData, 4, false).found());
}

// A generic write read by the async proxy needs a proxy fence on the way (check/memory_model.h).
TEST_F(Model, AnAsyncReadOfAGenericWriteNeedsAProxyFenceOnTheWay) {
  access(ta, kData, 4, true);
  mm.strong_access(ta, kFlag, 4, strong(Scope::Gpu, false, true), false, true, false);
  mm.strong_access(tb, kFlag, 4, strong(Scope::Gpu, true), true, false, false);
  MemoryModel::Access x;
  x.addr = kData;
  x.bytes = 4;
  x.read = true;
  x.order = order_bits::kAsync;
  const int agent = b.begin_global_agent(b.snapshot(0));
  EXPECT_EQ(mm.access({&b, agent}, x).kind, MemoryModel::Conflict::ProxyFence);
  b.proxy_fence(0);
  const int agent2 = b.begin_global_agent(b.snapshot(0));
  EXPECT_FALSE(mm.access({&b, agent2}, x).found());
}

// 8.9.2/8.9.5: a strong read that observes a write through a chain of atomics -- red included --
// orders the later accesses of that location after every write of the chain; a plain strong
// store ends the chain, so what was written before it is not observed through it.
TEST_F(Model, ObservationReachesTheWritesBeforeAnAtomicChainOnly) {
  const std::uint16_t gpu4 = order_bits::make(true, Scope::Gpu, 0, 4);
  for (bool red : {true, false}) {
    MemoryModel m{32};
    auto op = [&](const MemoryModel::Thread& t, bool read, bool write, bool atomic, std::uint16_t o) {
      MemoryModel::Access x;
      x.addr = kFlag;
      x.bytes = 4;
      x.read = read;
      x.write = write;
      x.atomic = atomic;
      x.order = o;
      return m.access(t, x);
    };
    op(ta, false, true, false, gpu4);                                        // st.relaxed.gpu
    op(tb, false, true, red, gpu4);                                          // red.relaxed, or st.relaxed.gpu
    EXPECT_FALSE(op(tc, true, false, false, gpu4).found());                  // ld.relaxed.gpu observes it
    EXPECT_EQ(op(tc, false, true, false, 0).found(), !red) << "red " << red;  // then a weak store there
  }
}

// The lanes of one atom instruction are threads whose read-modify-writes of one address run in
// no specified order (8.9.1, 8.5): a lane's weak store to the counter after its atom races with
// the other lanes' atoms, whichever lane it is; bar.warp.sync between orders them.
TEST_F(Isa, TheLanesOfOneAtomAreUnorderedUntilABarWarpSync) {
  for (const char* sync : {"", "  bar.warp.sync 0xffffffff;\n"})
    for (int lane : {0, 31}) {
      const std::string body = "  mov.u32 %r1, %tid.x;\n  atom.global.add.u32 %r2, [%rd62], 1;\n  setp.eq.u32 %p1, %r1, " +
                               std::to_string(lane) + ";\n" + sync + "  @%p1 st.global.u32 [%rd62], 0;\n";
      LoadedModule& m = dev.load(module(body));
      std::uint64_t din = dev.memory().alloc(8), dout = dev.memory().alloc(8);
      std::memset(dev.memory().find(din, 8), 0, 8);
      LaunchConfig c = cfg(32, 1, 1);
      c.detect_races = true;
      void* args[] = {&din, &dout};
      const LaunchResult r = dev.launch(m, "k", c, args);
      dev.unload(&m);
      EXPECT_EQ(emu_test::has(r, ReportKind::Race), !*sync) << "lane " << lane << " sync '" << sync << "'\n" << all(r);
    }
}

// 8.1: ld.global.nc is outside the memory model: reading bytes this launch wrote through it is
// reported even when a barrier orders the write before it; bytes nothing wrote are fine.
TEST_F(Isa, NonCoherentLoadOfBytesWrittenInTheLaunchIsReported) {
  const std::string body = "  mov.u32 %r1, %tid.x;\n  setp.eq.u32 %p1, %r1, 0;\n  mov.u32 %r2, 7;\n"
                           "  @%p1 st.global.u32 [%rd62], %r2;\n  bar.sync 0;\n  ld.global.nc.u32 %r3, [%rd62+OFF];\n";
  for (const char* off : {"0", "4"}) {
    std::string b = body;
    b.replace(b.find("OFF"), 3, off);
    LoadedModule& m = dev.load(module(b));
    std::uint64_t din = dev.memory().alloc(8), dout = dev.memory().alloc(8);
    std::memset(dev.memory().find(din, 8), 0, 8);
    LaunchConfig c = cfg(32, 1, 1);
    c.detect_races = true;
    void* args[] = {&din, &dout};
    const LaunchResult r = dev.launch(m, "k", c, args);
    dev.unload(&m);
    EXPECT_EQ(emu_test::has(r, ReportKind::NonCoherentRead), std::string(off) == "0") << off << "\n" << all(r);
    EXPECT_FALSE(emu_test::has(r, ReportKind::Race)) << all(r);
  }
}

}  // namespace
}  // namespace mgpu::emu::isa
