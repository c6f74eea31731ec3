// Spec tests for core/emu/insns/warp.cc: PTX ISA 9.7.9.6 shfl.sync (the pseudocode: maxLane =
// (lane & segmask) | (cval & ~segmask), minLane = lane & segmask; up: j = lane - b, p = j >=
// maxLane; down: j = lane + b, p = j <= maxLane; bfly: j = lane ^ b, p = j <= maxLane; idx: j =
// minLane | (b[4:0] & ~segmask), p = j <= maxLane; if !p, j = lane; d = a from lane j), 9.7.12.x
// vote.sync (all/any/uni/ballot over the non-exited threads of membermask), elect.sync (one
// leader; every thread gets its laneid in d, p true only for the leader) and activemask.
#include <set>

#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;

// Each lane: a = lane*10 + 1000; out[2*lane] = d, out[2*lane+1] = p.
std::vector<std::uint64_t> shfl(IsaTest& t, const std::string& mode, const std::string& b, const std::string& c) {
  return t.run(
      "  mov.u32 %r1, %laneid;\n  mad.lo.u32 %r2, %r1, 10, 1000;\n"
      "  shfl.sync." + mode + ".b32 %r3|%p1, %r2, " + b + ", " + c + ", 0xffffffff;\n"
      "  selp.u32 %r4, 1, 0, %p1;\n  mul.wide.u32 %rd1, %r1, 16;\n  add.u64 %rd2, %rd63, %rd1;\n"
      "  st.global.u32 [%rd2], %r3;\n  st.global.u32 [%rd2+8], %r4;\n",
      {}, 64, IsaTest::cfg(32));
}

TEST_F(Isa, ShflFullWarp) {
  auto idx = shfl(*this, "idx", "5", "0x1f");
  auto up = shfl(*this, "up", "3", "0");
  auto down = shfl(*this, "down", "3", "0x1f");
  auto bfly = shfl(*this, "bfly", "5", "0x1f");
  auto idx33 = shfl(*this, "idx", "33", "0x1f");  // only b[4:0] counts: lane 1
  for (int l = 0; l < 32; ++l) {
    auto v = [](int lane) { return std::uint64_t(lane * 10 + 1000); };
    EXPECT_EQ(idx[2 * l], v(5)) << l;
    EXPECT_EQ(idx[2 * l + 1], 1u) << l;
    EXPECT_EQ(up[2 * l], l >= 3 ? v(l - 3) : v(l)) << l;
    EXPECT_EQ(up[2 * l + 1], l >= 3 ? 1u : 0u) << l;
    EXPECT_EQ(down[2 * l], l + 3 <= 31 ? v(l + 3) : v(l)) << l;
    EXPECT_EQ(down[2 * l + 1], l + 3 <= 31 ? 1u : 0u) << l;
    EXPECT_EQ(bfly[2 * l], v(l ^ 5)) << l;
    EXPECT_EQ(bfly[2 * l + 1], 1u) << l;
    EXPECT_EQ(idx33[2 * l], v(1)) << l;
  }
}

// Segments of 8 lanes (CUDA's width argument): c = ((32 - 8) << 8) | clamp, segmask = 0x18.
TEST_F(Isa, ShflSegments) {
  auto idx = shfl(*this, "idx", "2", "0x181f");
  auto down = shfl(*this, "down", "3", "0x181f");
  auto up = shfl(*this, "up", "3", "0x1800");
  auto bfly = shfl(*this, "bfly", "4", "0x181f");
  auto clamp = shfl(*this, "idx", "6", "0x1804");  // clamp 4 inside each segment: maxLane = base + 4
  for (int l = 0; l < 32; ++l) {
    auto v = [](int lane) { return std::uint64_t(lane * 10 + 1000); };
    const int base = l & 0x18, pos = l & 7;
    EXPECT_EQ(idx[2 * l], v(base + 2)) << l;
    EXPECT_EQ(idx[2 * l + 1], 1u) << l;
    EXPECT_EQ(down[2 * l], pos + 3 <= 7 ? v(l + 3) : v(l)) << l;
    EXPECT_EQ(down[2 * l + 1], pos + 3 <= 7 ? 1u : 0u) << l;
    EXPECT_EQ(up[2 * l], pos >= 3 ? v(l - 3) : v(l)) << l;
    EXPECT_EQ(up[2 * l + 1], pos >= 3 ? 1u : 0u) << l;
    EXPECT_EQ(bfly[2 * l], v(l ^ 4)) << l;
    EXPECT_EQ(clamp[2 * l], v(l)) << l;  // j = base + 6 > maxLane: own value, p false
    EXPECT_EQ(clamp[2 * l + 1], 0u) << l;
  }
}

TEST_F(Isa, VoteAllAnyUniBallot) {
  auto o = run(
      "  mov.u32 %r1, %laneid;\n"
      "  setp.lt.u32 %p1, %r1, 32;\n  setp.lt.u32 %p2, %r1, 31;\n  setp.eq.u32 %p3, %r1, 7;\n  setp.eq.u32 %p4, %r1, 99;\n"
      "  and.b32 %r2, %r1, 1;\n  setp.ne.u32 %p5, %r2, 0;\n"
      "  vote.sync.all.pred %p6, %p1, 0xffffffff;\n  selp.u32 %r10, 1, 0, %p6;\n"
      "  vote.sync.all.pred %p6, %p2, 0xffffffff;\n  selp.u32 %r11, 1, 0, %p6;\n"
      "  vote.sync.any.pred %p6, %p3, 0xffffffff;\n  selp.u32 %r12, 1, 0, %p6;\n"
      "  vote.sync.any.pred %p6, %p4, 0xffffffff;\n  selp.u32 %r13, 1, 0, %p6;\n"
      "  vote.sync.uni.pred %p6, %p1, 0xffffffff;\n  selp.u32 %r14, 1, 0, %p6;\n"
      "  vote.sync.uni.pred %p6, %p5, 0xffffffff;\n  selp.u32 %r15, 1, 0, %p6;\n"
      "  vote.sync.ballot.b32 %r16, %p5, 0xffffffff;\n"
      "  vote.sync.ballot.b32 %r17, !%p5, 0xffffffff;\n"
      "  mul.wide.u32 %rd1, %r1, 64;\n  add.u64 %rd2, %rd63, %rd1;\n"
      "  st.global.v4.u32 [%rd2], {%r10, %r11, %r12, %r13};\n  st.global.v4.u32 [%rd2+16], {%r14, %r15, %r16, %r17};\n",
      {}, 32 * 8, cfg(32));
  for (int l = 0; l < 32; ++l) {
    const std::uint64_t* s = &o[8 * l];
    EXPECT_EQ(s[0], 0x0000000000000001ull | (0ull << 32)) << "all(true), all(lane<31) " << l;
    EXPECT_EQ(s[1], 0x0000000000000001ull) << "any(lane==7), any(false) " << l;
    EXPECT_EQ(s[2], 0x0000000000000001ull) << "uni(true), uni(lane odd) " << l;
    EXPECT_EQ(s[3], 0x55555555AAAAAAAAull) << "ballot(odd), ballot(!odd) " << l;
  }
}

// A subset of the warp (lanes 0..15 under a branch) votes over membermask 0x0000ffff.
TEST_F(Isa, VoteAndActivemaskInDivergentCode) {
  auto o = run(
      "  mov.u32 %r1, %laneid;\n  mul.wide.u32 %rd1, %r1, 8;\n  add.u64 %rd2, %rd63, %rd1;\n"
      "  activemask.b32 %r9;\n  st.global.u32 [%rd2+512], %r9;\n"
      "  setp.ge.u32 %p1, %r1, 16;\n  @%p1 bra DONE;\n"
      "  and.b32 %r2, %r1, 1;\n  setp.ne.u32 %p2, %r2, 0;\n"
      "  vote.sync.ballot.b32 %r3, %p2, 0x0000ffff;\n  st.global.u32 [%rd2], %r3;\n"
      "  setp.lt.u32 %p3, %r1, 5;\n  @!%p3 bra DONE;\n"
      "  activemask.b32 %r4;\n  st.global.u32 [%rd2+256], %r4;\n"
      "DONE:\n",
      {}, 96, cfg(32));
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(o[l], l < 16 ? 0x0000AAAAu : 0u) << l;
    EXPECT_EQ(o[32 + l], l < 5 ? 0x1Fu : 0u) << l;
    EXPECT_EQ(o[64 + l], 0xFFFFFFFFu) << l;
  }
  // A 40-thread block: the second warp has 8 threads.
  auto p = run("  mov.u32 %r1, %tid.x;\n  activemask.b32 %r2;\n  mul.wide.u32 %rd1, %r1, 8;\n  add.u64 %rd2, %rd63, %rd1;\n"
               "  st.global.u32 [%rd2], %r2;\n",
               {}, 40, cfg(40));
  for (int t = 0; t < 40; ++t) EXPECT_EQ(p[t], t < 32 ? 0xFFFFFFFFu : 0xFFu) << t;
}

TEST_F(Isa, ElectOneLeader) {
  for (const char* guard : {"", "  setp.lt.u32 %p2, %r1, 8;\n  @%p2 bra DONE;\n  setp.ge.u32 %p2, %r1, 16;\n  @%p2 bra DONE;\n"}) {
    const bool sub = *guard != 0;
    auto o = run(std::string("  mov.u32 %r1, %laneid;\n  mul.wide.u32 %rd1, %r1, 16;\n  add.u64 %rd2, %rd63, %rd1;\n  mov.u32 %r5, 99;\n") +
                     "  st.global.u32 [%rd2], %r5;\n" + guard +
                     "  elect.sync %r3|%p1, " + (sub ? "0x0000ff00" : "0xffffffff") + ";\n"
                     "  selp.u32 %r4, 1, 0, %p1;\n  st.global.u32 [%rd2], %r3;\n  st.global.u32 [%rd2+8], %r4;\n"
                     "DONE:\n",
                 {}, 64, cfg(32));
    const std::uint64_t leader = o[sub ? 16 : 0];
    int leaders = 0;
    for (int l = 0; l < 32; ++l) {
      const bool member = !sub || (l >= 8 && l < 16);
      if (!member) continue;
      EXPECT_EQ(o[2 * l], leader) << "every member gets the leader's laneid " << l;
      if (o[2 * l + 1]) {
        ++leaders;
        EXPECT_EQ(static_cast<std::uint64_t>(l), leader);
      }
    }
    EXPECT_EQ(leaders, 1);
    if (sub) {
      EXPECT_TRUE(leader >= 8 && leader < 16) << leader;
    }
  }
}

// shfl.sync from a lane that does not execute it: "results are undefined if a thread sources a
// register from an inactive thread or a thread that is not in membermask" (PTX ISA, shfl.sync).
// Lanes 16..31 leave (exit, or branch around it); lanes 0..15 shuffle over membermask 0xffff,
// reading lane `src` (a = lane*10 + 1000).
struct ShflSource : IsaTest {
  LaunchResult half_warp(const std::string& leave, const std::string& src) {
    const std::string body =
        "  mov.u32 %r1, %laneid;\n  setp.ge.u32 %p1, %r1, 16;\n" + leave +
        "  mad.lo.u32 %r2, %r1, 10, 1000;\n  " + src + "\n"
        "  shfl.sync.idx.b32 %r4, %r2, %r3, 0x1f, 0xffff;\n"
        "  mul.wide.u32 %rd1, %r1, 8;\n  add.u64 %rd2, %rd63, %rd1;\n  st.global.u32 [%rd2], %r4;\n"
        "DONE:\n";
    LoadedModule& m = dev.load(module(body));
    std::uint64_t din = dev.memory().alloc(8);
    out = dev.memory().alloc(32 * 8);
    std::memset(dev.memory().find(out, 32 * 8), 0, 32 * 8);
    void* args[] = {&din, &out};
    return dev.launch(m, "k", cfg(32), args);
  }
  std::uint64_t out = 0;
};

TEST_F(ShflSource, ReadingAnExitedLaneIsReported) {
  LaunchResult r = half_warp("  @%p1 exit;\n", "add.u32 %r3, %r1, 16;");
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::NotConverged) << all(r);
  EXPECT_NE(r.reports[0].message.find("lane 0 reads lane 16, which has exited"), std::string::npos) << all(r);
  EXPECT_NE(r.reports[0].message.find("shfl.sync.idx.b32"), std::string::npos) << all(r);
}

TEST_F(ShflSource, ReadingALaneOutsideTheMembermaskIsReported) {
  LaunchResult r = half_warp("  @%p1 bra DONE;\n", "add.u32 %r3, %r1, 16;");  // lanes 16..31 live on
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.reports[0].kind, ReportKind::NotConverged) << all(r);
  EXPECT_NE(r.reports[0].message.find("lane 0 reads lane 16, which is not in membermask"), std::string::npos) << all(r);
}

TEST_F(ShflSource, ReadingAMemberLaneIsClean) {
  LaunchResult r = half_warp("  @%p1 exit;\n", "xor.b32 %r3, %r1, 1;");
  ASSERT_TRUE(r.ok) << all(r);
  EXPECT_TRUE(r.reports.empty()) << all(r);
  const auto* o = reinterpret_cast<const std::uint64_t*>(dev.memory().find(out, 32 * 8));
  for (int l = 0; l < 16; ++l) EXPECT_EQ(o[l], std::uint64_t((l ^ 1) * 10 + 1000)) << l;
}

}  // namespace
}  // namespace mgpu::emu::isa
