// Spec tests for core/emu/insns/barrier.cc: PTX ISA 9.7.13.1 bar / barrier: "bar.sync a{, b}"
// waits until b threads (a multiple of the warp size; all threads of the CTA when b is absent)
// have arrived at barrier a; "bar.arrive" signals arrival without waiting, which is how a
// producer hands data to consumers that wait with bar.sync on the same barrier and count.
// Each test runs under several scheduler seeds: a barrier that does not wait shows up as a
// consumer reading before the producer wrote.
#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;
const char* kSmem = ".shared .align 4 .b32 buf[256];";

// 128 threads: warps 0+1 use barrier 1 with 64 threads, warps 2+3 barrier 2 with 64 threads.
// In each pair the lower warp writes shared memory and the upper warp reads its partner's value.
TEST_F(Isa, BarSyncWithThreadCount) {
  const std::string body =
      "  mov.u32 %r1, %tid.x;\n  shr.u32 %r2, %r1, 5;\n  and.b32 %r3, %r2, 1;\n  shr.u32 %r4, %r2, 1;\n"  // r3 = upper in pair, r4 = pair
      "  add.u32 %r5, %r4, 1;\n"  // barrier id
      "  setp.eq.u32 %p1, %r3, 0;\n"
      "  mov.u32 %r6, buf;\n  shl.b32 %r7, %r1, 2;\n  add.u32 %r8, %r6, %r7;\n"
      "  @%p1 mad.lo.u32 %r9, %r1, 3, 7;\n  @%p1 st.shared.u32 [%r8], %r9;\n"
      "  bar.sync %r5, 64;\n"
      "  @%p1 bra DONE;\n"
      "  sub.u32 %r11, %r8, 128;\n  ld.shared.u32 %r10, [%r11];\n"
      "  mul.wide.u32 %rd1, %r1, 8;\n  add.u64 %rd2, %rd63, %rd1;\n  st.global.u32 [%rd2], %r10;\n"
      "DONE:\n";
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    auto o = run(body, {}, 128, cfg(128, 1, seed), kSmem);
    for (int t = 0; t < 128; ++t) {
      if (((t >> 5) & 1) == 0) continue;
      ASSERT_EQ(o[t], std::uint64_t((t - 32) * 3 + 7)) << "thread " << t << " seed " << seed;
    }
  }
}

// Producer/consumer: warp 0 writes then bar.arrive 1, 64; warp 1 bar.sync 1, 64 then reads.
// Warp 0 runs ahead (arrive does not wait) and writes a second value after its arrival only
// behind a second barrier round, so the consumer must see the first value.
TEST_F(Isa, BarArriveProducerConsumer) {
  const std::string body =
      "  mov.u32 %r1, %tid.x;\n  and.b32 %r2, %r1, 31;\n  shl.b32 %r3, %r2, 2;\n  mov.u32 %r4, buf;\n  add.u32 %r5, %r4, %r3;\n"
      "  setp.ge.u32 %p1, %r1, 32;\n  @%p1 bra CONSUMER;\n"
      "  add.u32 %r6, %r2, 500;\n  st.shared.u32 [%r5], %r6;\n"
      "  bar.arrive 1, 64;\n"
      "  bar.sync 2, 64;\n"  // the consumer has read
      "  st.shared.u32 [%r5], 0;\n"
      "  bra DONE;\n"
      "CONSUMER:\n"
      "  bar.sync 1, 64;\n"
      "  ld.shared.u32 %r7, [%r5];\n"
      "  bar.arrive 2, 64;\n"
      "  mul.wide.u32 %rd1, %r2, 8;\n  add.u64 %rd2, %rd63, %rd1;\n  st.global.u32 [%rd2], %r7;\n"
      "DONE:\n";
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    auto o = run(body, {}, 32, cfg(64, 1, seed), kSmem);
    for (int l = 0; l < 32; ++l) ASSERT_EQ(o[l], std::uint64_t(500 + l)) << "lane " << l << " seed " << seed;
  }
}

// bar.sync 0 without a count: every thread of the CTA (here 96, three warps).
TEST_F(Isa, BarSyncWholeCta) {
  const std::string body =
      "  mov.u32 %r1, %tid.x;\n  shl.b32 %r2, %r1, 2;\n  mov.u32 %r3, buf;\n  add.u32 %r4, %r3, %r2;\n"
      "  st.shared.u32 [%r4], %r1;\n  bar.sync 0;\n"
      "  sub.u32 %r5, 95, %r1;\n  shl.b32 %r6, %r5, 2;\n  add.u32 %r7, %r3, %r6;\n  ld.shared.u32 %r8, [%r7];\n"
      "  mul.wide.u32 %rd1, %r1, 8;\n  add.u64 %rd2, %rd63, %rd1;\n  st.global.u32 [%rd2], %r8;\n";
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    auto o = run(body, {}, 96, cfg(96, 1, seed), kSmem);
    for (int t = 0; t < 96; ++t) ASSERT_EQ(o[t], std::uint64_t(95 - t)) << t << " seed " << seed;
  }
}

// bar.red (PTX ISA 9.7.13.1): "bar.red performs a reduction across the threads of the barrier":
// .popc.u32 counts the threads whose predicate is true, .and/.or combine them, and every
// participating thread receives the result. 64 threads, c = (tid % 3 == 0) -> 22 of them;
// !c in the .and form: false for some thread -> false; .or of c -> true.
TEST_F(Isa, BarRedPopcAndOr) {
  const std::string body =
      "  mov.u32 %r1, %tid.x;\n  rem.u32 %r2, %r1, 3;\n  setp.eq.u32 %p1, %r2, 0;\n"
      "  bar.red.popc.u32 %r3, 0, %p1;\n"
      "  bar.red.and.pred %p2, 1, 64, !%p1;\n"
      "  bar.red.or.pred %p3, 2, %p1;\n"
      "  selp.u32 %r4, 1, 0, %p2;\n  selp.u32 %r5, 1, 0, %p3;\n"
      "  mul.wide.u32 %rd1, %r1, 24;\n  add.u64 %rd2, %rd63, %rd1;\n"
      "  st.global.u32 [%rd2], %r3;\n  st.global.u32 [%rd2+8], %r4;\n  st.global.u32 [%rd2+16], %r5;\n";
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    auto o = run(body, {}, 64 * 3, cfg(64, 1, seed));
    for (int t = 0; t < 64; ++t) {
      ASSERT_EQ(o[3 * t], 22u) << "thread " << t << " seed " << seed;
      ASSERT_EQ(o[3 * t + 1], 0u) << "thread " << t;
      ASSERT_EQ(o[3 * t + 2], 1u) << "thread " << t;
    }
  }
}

// mbarrier.arrive_drop through the decoder: count 2, one arrive_drop and two arrives complete two
// phases (the second needs one arrival after the drop), so the current phase is 2: test_wait
// with parity 1 (phase 1 done) is true, with parity 0 (phase 2 not done) false. Without the drop
// it would be the other way round.
TEST_F(Isa, MbarrierArriveDrop) {
  const std::string body =
      "  mov.u32 %r1, bar;\n  mbarrier.init.shared.b64 [%r1], 2;\n"
      "  mbarrier.arrive_drop.shared.b64 %rd1, [%r1];\n"
      "  mbarrier.arrive.shared.b64 %rd2, [%r1];\n"
      "  mbarrier.arrive.shared.b64 %rd3, [%r1];\n"
      "  mbarrier.test_wait.parity.shared.b64 %p1, [%r1], 1;\n"
      "  mbarrier.test_wait.parity.shared.b64 %p2, [%r1], 0;\n"
      "  selp.u32 %r2, 1, 0, %p1;\n  selp.u32 %r3, 1, 0, %p2;\n"
      "  st.global.u32 [%rd63], %r2;\n  st.global.u32 [%rd63+8], %r3;\n";
  auto o = run(body, {}, 2, cfg(1), ".shared .align 8 .b64 bar;");
  EXPECT_EQ(o[0], 1u);
  EXPECT_EQ(o[1], 0u);
}

}  // namespace
}  // namespace mgpu::emu::isa
