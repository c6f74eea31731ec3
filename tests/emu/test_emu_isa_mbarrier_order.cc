// Spec tests for the memory ordering of core/emu/insns/mbarrier.cc under the race detector.
// PTX ISA 9.7.13.15.13 (mbarrier.arrive): ".sem = { .release, .relaxed }", ".release is assumed
// by default", and "The .relaxed qualifier does not provide any memory ordering semantics and
// visibility guarantees"; 9.7.13.15.16 (test_wait/try_wait): a successful wait acquires, unless
// .relaxed. So a shared store handed over by an arrive/wait pair is ordered only when neither
// side is relaxed: the faulty kernels (a relaxed side) must be reported as races.
#include "isa_harness.h"
#include "tests/emu/emu_test_util.h"

namespace mgpu::emu::isa {
namespace {

struct MbarrierOrder : IsaTest {
  // Thread 32 stores to shared memory and arrives; thread 0 waits for the phase and loads it.
  LaunchResult handover(const std::string& arrive_sem, const std::string& wait_sem, std::uint64_t seed) {
    const std::string body =
        "  mov.u32 %r1, %tid.x;\n  setp.eq.u32 %p1, %r1, 0;\n"
        "  @%p1 mbarrier.init.shared.b64 [bar], 1;\n  bar.sync 0;\n"
        "  setp.eq.u32 %p2, %r1, 32;\n  @!%p2 bra CONSUMER;\n"
        "  mov.u32 %r2, 42;\n  st.shared.u32 [data], %r2;\n"
        "  mbarrier.arrive" + arrive_sem + ".shared.b64 %rd1, [bar];\n  bra DONE;\n"
        "CONSUMER:\n  @!%p1 bra DONE;\n"
        "WAIT:\n  mbarrier.try_wait.parity" + wait_sem + ".shared.b64 %p3, [bar], 0;\n  @!%p3 bra WAIT;\n"
        "  ld.shared.u32 %r3, [data];\n  cvt.u64.u32 %rd2, %r3;\n  st.global.u64 [%rd63], %rd2;\n"
        "DONE:\n";
    const std::string smem = ".shared .align 8 .b64 bar;\n.shared .align 4 .b32 data;";
    LoadedModule& m = dev.load(module(body, smem));
    std::uint64_t din = dev.memory().alloc(8), dout = dev.memory().alloc(8);
    void* args[] = {&din, &dout};
    LaunchConfig c = cfg(64, 1, seed);
    c.detect_races = true;
    LaunchResult r = dev.launch(m, "k", c, args);
    std::uint64_t got = 0;
    std::memcpy(&got, dev.memory().find(dout, 8), 8);
    EXPECT_EQ(got, 42u) << "the wait did not wait";
    return r;
  }
  static bool raced(const LaunchResult& r) { return emu_test::has(r, ReportKind::Race); }
};

TEST_F(MbarrierOrder, ReleaseArriveAndAcquireWaitOrderTheStore) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    EXPECT_FALSE(raced(handover("", "", seed))) << "default semantics are release/acquire";
    EXPECT_FALSE(raced(handover(".release.cta", ".acquire.cta", seed)));
  }
}

TEST_F(MbarrierOrder, ARelaxedArriveHandsOverNothing) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    LaunchResult r = handover(".relaxed.cta", "", seed);
    EXPECT_TRUE(r.ok) << all(r);
    EXPECT_TRUE(raced(r)) << all(r);
  }
}

TEST_F(MbarrierOrder, ARelaxedWaitAcquiresNothing) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) EXPECT_TRUE(raced(handover("", ".relaxed.cta", seed)));
}

}  // namespace
}  // namespace mgpu::emu::isa
