// How the virtual device holds a launch's clusters (exec/launch.cc, run_launch): a kernel that
// can wait for another cluster (an atomic or strong access of global memory, a .gpu fence) runs
// as the hardware would hold it -- at most (SMs / cluster size) x resident CTAs per SM clusters
// at once, dispatched in order, one per SM group before a second on any, the next starting when
// one exits -- so a grid-wide barrier passes as a persistent grid and is reported (step limit,
// naming the clusters that cannot start) beyond it; the deadlock and step-limit reports name the
// clusters involved. Each faulty kernel is reported under all of seeds 1..200, each correct twin
// clean under all of them (tests/emu/emu_test_util.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/emu/device.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu {
namespace {

using emu_test::all;
using emu_test::clean;
using emu_test::count_seeds;
using emu_test::kSeeds;

bool message_has(const LaunchResult& r, ReportKind k, const std::string& text) {
  for (const auto& x : r.reports)
    if (x.kind == k && x.message.find(text) != std::string::npos) return true;
  return false;
}

// A kernel of 32-thread CTAs; `body` runs in every thread with the out buffer in %rd1, a second
// buffer in %rd2, %r1 = %tid.x, %r2 = %ctaid.x (linear over x), %r3 = %nctaid.x.
std::string kernel(const std::string& body, const std::string& target = "sm_90a") {
  return ".version 8.0\n.target " + target + "\n.address_size 64\n"
         ".visible .entry k(.param .u64 out, .param .u64 aux)\n{\n"
         "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n"
         "  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [aux];\n  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n"
         "  mov.u32 %r3, %nctaid.x;\n" + body + "  ret;\n}\n";
}

struct Residency : ::testing::Test {
  Device dev;
  std::uint64_t out = 0, aux = 0;
  std::vector<std::uint32_t> result;

  LaunchResult run(const std::string& text, std::uint32_t grid, std::uint64_t seed, std::uint32_t sms = 0, std::uint32_t per_sm = 0,
                   std::uint32_t cluster = 1, std::uint64_t step_limit = 20'000) {
    LoadedModule& m = dev.load(text);
    out = dev.memory().alloc(4 * 1024);
    aux = dev.memory().alloc(64);
    std::memset(dev.memory().find(out, 4 * 1024), 0, 4 * 1024);
    std::memset(dev.memory().find(aux, 64), 0, 64);
    LaunchConfig c;
    c.block[0] = 32;
    c.grid[0] = grid;
    c.cluster[0] = cluster;
    c.seed = seed;
    c.sms = sms;
    c.resident_ctas = per_sm;
    c.detect_races = true;
    c.step_limit = step_limit;
    void* args[] = {&out, &aux};
    LaunchResult r = dev.launch(m, "k", c, args);
    result.assign(1024, 0);
    std::memcpy(result.data(), dev.memory().find(out, 4 * 1024), 4 * 1024);
    dev.unload(&m);
    return r;
  }
};

// A grid-wide barrier: every CTA's thread 0 counts itself in, then spins until all have.
const std::string kGridBarrier =
    "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n  atom.release.gpu.global.add.u32 %r4, [%rd2], 1;\n"
    "SPIN:\n  ld.acquire.gpu.global.u32 %r5, [%rd2];\n  setp.lt.u32 %p2, %r5, %r3;\n  @%p2 bra SPIN;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.u64 %rd4, %rd1, %rd3;\n  st.global.u32 [%rd4], %r5;\nDONE:\n";

// Eight SMs, one CTA each: eight CTAs are all resident, and meet at the barrier; nine cannot.
TEST_F(Residency, AGridBarrierPassesAsAPersistentGridAndIsReportedBeyondIt) {
  std::string example;
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(kernel(kGridBarrier), 8, s, 8, 1); },
                        [&](const LaunchResult& r) { return clean(r) && std::count(result.begin(), result.begin() + 8, 8u) == 8; },
                        &example),
            kSeeds)
      << example;
  auto found = [](const LaunchResult& r) {
    return !r.ok && message_has(r, ReportKind::StepLimit, "1 more cluster of the grid cannot start until a resident one exits") &&
           message_has(r, ReportKind::StepLimit, "at most 8 clusters are resident at once (8 SMs used by clusters of 1 CTA");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(kernel(kGridBarrier), 9, s, 8, 1); }, found, &example), kSeeds) << example;
  // With 132 SMs (the H100 the device presents) and the launch's own residency, 264 are fine.
  LaunchResult r = run(kernel(kGridBarrier), 264, 1);
  EXPECT_TRUE(clean(r)) << all(r);
}

// Each CTA counts itself in and out of a "live" counter and records the most it saw: never more
// than can be resident (4 SMs x 2 CTAs), and that many under some schedules; every CTA ran.
TEST_F(Residency, NoMoreClustersThanCanBeResidentRunAtOnce) {
  const std::string body =
      "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n  atom.global.add.u32 %r4, [%rd2], 1;\n  add.u32 %r4, %r4, 1;\n"
      "  atom.global.max.u32 %r5, [%rd2+4], %r4;\n  mov.u32 %r6, 0;\nWORK:\n  add.u32 %r6, %r6, 1;\n  setp.lt.u32 %p2, %r6, 40;\n"
      "  @%p2 bra WORK;\n  atom.global.add.u32 %r7, [%rd2+8], 1;\n  atom.global.add.u32 %r4, [%rd2], -1;\nDONE:\n";
  int full = 0;
  for (std::uint64_t s = 1; s <= 50; ++s) {
    LaunchResult r = run(kernel(body), 32, s, 4, 2);
    ASSERT_TRUE(clean(r)) << all(r);
    std::uint32_t a[3];
    std::memcpy(a, dev.memory().find(aux, 12), 12);
    EXPECT_LE(a[1], 8u) << "seed " << s;
    EXPECT_EQ(a[2], 32u) << "seed " << s;
    full += a[1] == 8u;
  }
  EXPECT_GT(full, 0);
}

// %smid and %nsmid: a persistent grid of one CTA per SM sees every SM once (one cluster per SM
// group before a second); clusters of two occupy consecutive SMs. An sm_100a module presents 148.
TEST_F(Residency, SmIdsOfAResidentGridAreTheSmsItIsHeldOn) {
  const std::string body = "  red.global.add.u32 [%rd2], 1;\n  mov.u32 %r4, %smid;\n  mov.u32 %r5, %nsmid;\n"
                           "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n  mul.wide.u32 %rd3, %r2, 8;\n  add.u64 %rd4, %rd1, %rd3;\n"
                           "  st.global.v2.u32 [%rd4], {%r4, %r5};\nDONE:\n";
  LaunchResult r = run(kernel(body), 132, 1);
  ASSERT_TRUE(clean(r)) << all(r);
  std::set<std::uint32_t> sms;
  for (int i = 0; i < 132; ++i) {
    sms.insert(result[2 * i]);
    EXPECT_EQ(result[2 * i + 1], 132u);
  }
  EXPECT_EQ(sms.size(), 132u);
  EXPECT_EQ(*sms.rbegin(), 131u);
  r = run(kernel(body), 8, 1, 8, 0, 2);
  ASSERT_TRUE(clean(r)) << all(r);
  for (int i = 0; i < 8; i += 2) EXPECT_EQ(result[2 * (i + 1)], result[2 * i] + 1) << "cluster of CTAs " << i << ", " << i + 1;
  r = run(kernel(body, "sm_100a"), 2, 1);
  ASSERT_TRUE(clean(r)) << all(r);
  EXPECT_EQ(result[1], 148u);
}

// A co-resident cluster deadlocked on its own barrier is reported with the others still stuck;
// one whose peer finished is reported alone; and a peer spinning on a flag the deadlocked
// cluster would set reaches the step limit, whose report names the cluster that cannot move.
TEST_F(Residency, DeadlocksAndSpinsNameTheClustersInvolved) {
  // bar.sync 1, 64 in a 32-thread CTA: the other 32 never come.
  const std::string stuck = "  red.global.add.u32 [%rd2+8], 1;\n  bar.sync 1, 64;\n";
  std::string example;
  auto both = [](const LaunchResult& r) {
    return !r.ok && message_has(r, ReportKind::Deadlock, "every live thread of the co-resident clusters (") &&
           message_has(r, ReportKind::Deadlock, "named barrier 1 (32 of 64 threads arrived)");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(kernel(stuck), 2, s); }, both, &example), kSeeds) << example;
  const std::string one = "  red.global.add.u32 [%rd2+8], 1;\n  setp.ne.u32 %p3, %r2, 0;\n  @%p3 bra DONE;\n  bar.sync 1, 64;\nDONE:\n";
  auto alone = [](const LaunchResult& r) {
    return !r.ok && message_has(r, ReportKind::Deadlock, "every live thread of cluster (0,0,0) waits");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(kernel(one), 2, s); }, alone, &example), kSeeds) << example;
  const std::string spin =
      "  setp.ne.u32 %p3, %r2, 0;\n  @%p3 bra PEER;\n  bar.sync 1, 64;\n  st.release.gpu.global.u32 [%rd2], 1;\n  bra DONE;\n"
      "PEER:\n  ld.acquire.gpu.global.u32 %r5, [%rd2];\n  setp.ne.u32 %p4, %r5, 1;\n  @%p4 bra PEER;\nDONE:\n";
  auto named = [](const LaunchResult& r) {
    return !r.ok && message_has(r, ReportKind::StepLimit, "cluster (0,0,0) cannot move: every live thread waits") &&
           message_has(r, ReportKind::StepLimit, "named barrier 1");
  };
  EXPECT_EQ(count_seeds([&](std::uint64_t s) { return run(kernel(spin), 2, s, 0, 0, 1, 20'000); }, named, &example), kSeeds) << example;
}

}  // namespace
}  // namespace mgpu::emu
