// Spec tests for special registers (PTX ISA 10 "Special Registers": %tid, %ntid, %laneid,
// %warpid, %ctaid, %nctaid, %cluster_ctarank, %cluster_nctarank, %clusterid, %nclusterid,
// %cluster_ctaid), cluster addressing (9.7.9.19 mapa: "the address of the corresponding variable
// in the target CTA"; 9.7.9.20 getctarank: "the rank of the CTA containing the address") from
// core/emu/insns/data.cc and misc.cc, and the decoder's refusal of what it does not implement
// (a Fault of kind Unsupported naming the opcode and its line).
#include <set>

#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;

// Grid 3x2, blocks 40x2 (80 threads: warps of threads 0-31, 32-63, 64-79 in x-major order).
TEST_F(Isa, SpecialRegistersOfThreadsAndCtas) {
  LaunchConfig c = cfg(40, 3);
  c.block[1] = 2;
  c.grid[1] = 2;
  const std::string regs[] = {"%tid.x", "%tid.y", "%ntid.x", "%ntid.y", "%ctaid.x", "%ctaid.y", "%nctaid.x", "%nctaid.y", "%laneid", "%warpid", "%tid.z", "%ntid.z"};
  std::string body =
      "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %tid.y;\n  mad.lo.u32 %r3, %r2, 40, %r1;\n"  // linear thread
      "  mov.u32 %r4, %ctaid.x;\n  mov.u32 %r5, %ctaid.y;\n  mad.lo.u32 %r6, %r5, 3, %r4;\n"  // linear cta
      "  mad.lo.u32 %r7, %r6, 80, %r3;\n  mul.wide.u32 %rd1, %r7, 96;\n  add.u64 %rd2, %rd63, %rd1;\n";
  for (int i = 0; i < 12; ++i)
    body += "  mov.u32 %r10, " + regs[i] + ";\n  st.global.u32 [%rd2+" + std::to_string(8 * i) + "], %r10;\n";
  auto o = run(body, {}, 6 * 80 * 12, c);
  for (int cy = 0; cy < 2; ++cy)
    for (int cx = 0; cx < 3; ++cx) {
      std::set<std::uint64_t> warpids;
      std::uint64_t warp_of[3] = {~0ull, ~0ull, ~0ull};
      for (int ty = 0; ty < 2; ++ty)
        for (int tx = 0; tx < 40; ++tx) {
          const int t = ty * 40 + tx, g = (cy * 3 + cx) * 80 + t;
          const std::uint64_t* s = &o[12 * g];
          EXPECT_EQ(s[0], std::uint64_t(tx));
          EXPECT_EQ(s[1], std::uint64_t(ty));
          EXPECT_EQ(s[2], 40u);
          EXPECT_EQ(s[3], 2u);
          EXPECT_EQ(s[4], std::uint64_t(cx));
          EXPECT_EQ(s[5], std::uint64_t(cy));
          EXPECT_EQ(s[6], 3u);
          EXPECT_EQ(s[7], 2u);
          EXPECT_EQ(s[8], std::uint64_t(t % 32)) << "laneid of thread " << t;
          EXPECT_EQ(s[10], 0u);
          EXPECT_EQ(s[11], 1u);
          // %warpid: the same for the lanes of one warp, distinct between the warps of a CTA.
          if (warp_of[t / 32] == ~0ull) warp_of[t / 32] = s[9];
          EXPECT_EQ(s[9], warp_of[t / 32]) << "thread " << t;
        }
      for (auto w : warp_of) warpids.insert(w);
      EXPECT_EQ(warpids.size(), 3u);
    }
}

// Grid of 4x2 CTAs in clusters of 2x1: cluster ids, ranks and counts.
TEST_F(Isa, ClusterSpecialRegisters) {
  LaunchConfig c = cfg(32, 4);
  c.grid[1] = 2;
  c.cluster[0] = 2;
  const std::string regs[] = {"%cluster_ctarank", "%cluster_nctarank", "%clusterid.x", "%clusterid.y", "%nclusterid.x",
                              "%nclusterid.y", "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_nctaid.x"};
  std::string body =
      "  mov.u32 %r4, %ctaid.x;\n  mov.u32 %r5, %ctaid.y;\n  mad.lo.u32 %r6, %r5, 4, %r4;\n"
      "  mul.wide.u32 %rd1, %r6, 72;\n  add.u64 %rd2, %rd63, %rd1;\n  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra DONE;\n";
  for (int i = 0; i < 9; ++i) body += "  mov.u32 %r10, " + regs[i] + ";\n  st.global.u32 [%rd2+" + std::to_string(8 * i) + "], %r10;\n";
  body += "DONE:\n";
  auto o = run(body, {}, 8 * 9, c);
  for (int cy = 0; cy < 2; ++cy)
    for (int cx = 0; cx < 4; ++cx) {
      const std::uint64_t* s = &o[9 * (cy * 4 + cx)];
      EXPECT_EQ(s[0], std::uint64_t(cx % 2)) << cx << "," << cy;
      EXPECT_EQ(s[1], 2u);
      EXPECT_EQ(s[2], std::uint64_t(cx / 2));
      EXPECT_EQ(s[3], std::uint64_t(cy));
      EXPECT_EQ(s[4], 2u);
      EXPECT_EQ(s[5], 2u);
      EXPECT_EQ(s[6], std::uint64_t(cx % 2));
      EXPECT_EQ(s[7], 0u);
      EXPECT_EQ(s[8], 2u);
    }
}

// Clusters of 4: each CTA stores 100 + its rank in its own shared variable, the cluster
// synchronizes, and each CTA reads its neighbour's (rank + 1) % 4 through mapa (shared::cluster
// and generic forms) and asks getctarank who owns the mapped address.
TEST_F(Isa, MapaAndGetctarankWithinCluster) {
  LaunchConfig c = cfg(32, 8);
  c.cluster[0] = 4;
  const std::string body =
      "  mov.u32 %r1, %cluster_ctarank;\n  add.u32 %r2, %r1, 100;\n  mov.u32 %r3, %tid.x;\n"
      "  setp.eq.u32 %p1, %r3, 0;\n  @%p1 st.shared.u32 [cell], %r2;\n"
      "  barrier.cluster.arrive;\n  barrier.cluster.wait;\n"
      "  add.u32 %r4, %r1, 1;\n  and.b32 %r4, %r4, 3;\n"
      "  mov.u32 %r5, cell;\n  mapa.shared::cluster.u32 %r6, %r5, %r4;\n  ld.shared::cluster.u32 %r7, [%r6];\n"
      "  getctarank.shared::cluster.u32 %r8, %r6;\n"
      "  cvta.shared.u64 %rd1, cell;\n  mapa.u64 %rd2, %rd1, %r4;\n  ld.u32 %r9, [%rd2];\n  getctarank.u32 %r10, %rd2;\n"
      "  getctarank.shared::cluster.u32 %r11, %r5;\n"  // the CTA's own shared address: its own rank
      "  barrier.cluster.arrive;\n  barrier.cluster.wait;\n"
      "  @!%p1 bra DONE;\n"
      "  mov.u32 %r12, %ctaid.x;\n  mul.wide.u32 %rd3, %r12, 40;\n  add.u64 %rd4, %rd63, %rd3;\n"
      "  st.global.u32 [%rd4], %r7;\n  st.global.u32 [%rd4+8], %r8;\n  st.global.u32 [%rd4+16], %r9;\n"
      "  st.global.u32 [%rd4+24], %r10;\n  st.global.u32 [%rd4+32], %r11;\n"
      "DONE:\n";
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    c.seed = seed;
    auto o = run(body, {}, 8 * 5, c, ".shared .align 4 .b32 cell;");
    for (int cta = 0; cta < 8; ++cta) {
      const std::uint64_t rank = cta % 4, peer = (rank + 1) % 4;
      EXPECT_EQ(o[5 * cta + 0], 100 + peer) << cta;
      EXPECT_EQ(o[5 * cta + 1], peer) << cta;
      EXPECT_EQ(o[5 * cta + 2], 100 + peer) << cta;
      EXPECT_EQ(o[5 * cta + 3], peer) << cta;
      EXPECT_EQ(o[5 * cta + 4], rank) << cta;
    }
  }
}

TEST_F(Isa, UnsupportedInstructionNamesOpcodeAndLine) {
  const std::string text = module("  mov.u32 %r1, 1;\n  istypep.samplerref %p1, %rd1;\n  st.global.u32 [%rd63], %r1;\n");
  int line = 0, n = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 7, "istypep") == 0) { line = n; break; }
    if (text[i] == '\n') ++n;
  }
  try {
    dev.load(text);
    FAIL() << "loading a kernel with istypep succeeded";
  } catch (const Fault& f) {
    EXPECT_EQ(f.report.kind, ReportKind::Unsupported);
    EXPECT_EQ(f.report.where.line, line);
    EXPECT_NE(f.report.message.find("istypep"), std::string::npos) << f.report.message;
  }
}

// Packed f16x2/bf16x2 arithmetic (PTX ISA 9.7.4 "Half Precision Floating-Point Instructions")
// is not modelled: the decoder must refuse it, never compute it as one scalar.
TEST_F(Isa, PackedHalfArithmeticIsRefusedNotComputed) {
  for (const std::string insn : {"add.rn.f16x2", "sub.bf16x2", "mul.rn.bf16x2", "fma.rn.f16x2", "min.f16x2"}) {
    const bool three = insn.rfind("fma", 0) == 0;
    const std::string text = module("  " + insn + " %r1, %r2, %r3" + (three ? ", %r4" : "") + ";\n");
    try {
      dev.load(text);
      ADD_FAILURE() << "loading a kernel with " << insn << " succeeded";
    } catch (const Fault& f) {
      EXPECT_EQ(f.report.kind, ReportKind::Unsupported) << insn;
      EXPECT_NE(f.report.message.find("packed half arithmetic"), std::string::npos) << f.report.message;
    }
  }
}

}  // namespace
}  // namespace mgpu::emu::isa
