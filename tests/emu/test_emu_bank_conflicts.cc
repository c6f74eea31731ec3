// Shared-memory bank conflicts (core/emu/check/bank_conflicts.h): one warp of hand-written PTX
// per pattern, each access on its own PTX line, and the exact wavefronts, ideal and conflicts
// the model's rules give for it -- 32 banks of 4 bytes, lanes on one word served together,
// 8-byte accesses in half-warps and 16-byte ones in quarter-warps, wavefronts = the most
// distinct words any bank must deliver in a phase. Every expected number is worked out by hand
// beside its test.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "core/emu/check/launch_json.h"
#include "core/emu/device.h"

namespace mgpu::emu {
namespace {

struct Banks : ::testing::Test {
  Device dev;
  std::string text;

  // One CTA of `threads` threads; %r0 = %tid.x, %r1 = the shared address of sm[4096], which
  // the FILL loop writes whole first (for 32 threads: 8 warp-wide st.shared.v4 of 512
  // contiguous bytes, no conflicts) so that no read is of uninitialized memory. The body
  // follows label BODY and may use %r10 and up.
  LaunchResult run(const std::string& body, std::uint32_t threads = 32) {
    text = ".version 8.0\n.target sm_90a\n.address_size 64\n.shared .align 16 .b8 sm[4096];\n"
           ".visible .entry k()\n{\n"
           "  .reg .pred %p<8>;\n  .reg .b32 %r<64>;\n  .reg .b64 %rd<16>;\n"
           "  mov.u32 %r0, %tid.x;\n  mov.u32 %r1, sm;\n"
           "  mov.u32 %r2, %ntid.x;\n  shl.b32 %r2, %r2, 4;\n  shl.b32 %r4, %r0, 4;\n"
           "FILL:\n"
           "  add.u32 %r3, %r4, %r1;\n"
           "  st.shared.v4.u32 [%r3], {%r0, %r0, %r0, %r0};\n"
           "  add.u32 %r4, %r4, %r2;\n  setp.lt.u32 %p0, %r4, 4096;\n  @%p0 bra FILL;\n"
           "  bar.sync 0;\n"
           "BODY:\n" +
           body + "  ret;\n}\n";
    LoadedModule& m = dev.load(text);
    LaunchConfig c;
    c.block[0] = threads;
    LaunchResult r = dev.launch(m, "k", c, nullptr);
    EXPECT_TRUE(r.ok && r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0].format());
    return r;
  }

  // The PTX line of `insn` (which must occur once in the module).
  int line_of(const std::string& insn) const {
    const std::size_t at = text.find(insn);
    EXPECT_NE(at, std::string::npos) << insn;
    EXPECT_EQ(text.find(insn, at + 1), std::string::npos) << insn << " occurs twice";
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  }

  // The counts of the line holding `insn`; all zero when nothing was counted there.
  BankTally at(const LaunchResult& r, const std::string& insn) const {
    const int line = line_of(insn);
    for (const BankLine& l : r.banks.lines)
      if (l.line == line) return l.tally;
    return {};
  }

  static void expect(const BankTally& t, std::uint64_t accesses, std::uint64_t wavefronts, std::uint64_t ideal,
                     std::uint64_t conflicts) {
    EXPECT_EQ(t.accesses, accesses);
    EXPECT_EQ(t.wavefronts, wavefronts);
    EXPECT_EQ(t.ideal, ideal);
    EXPECT_EQ(t.conflicts(), conflicts);
  }

  // %rN = sm + (%tid.x << shift)
  static std::string lane_addr(int n, int shift) {
    const std::string r = "%r" + std::to_string(n);
    return "  shl.b32 " + r + ", %r0, " + std::to_string(shift) + ";\n  add.u32 " + r + ", " + r + ", %r1;\n";
  }
};

// FILL: 8 accesses, each 4 quarter-warps of 8 lanes x 16 contiguous bytes = 128 bytes over
// the 32 banks: 4 wavefronts, ideal 4.
TEST_F(Banks, FillLoopIsConflictFreeAndAttributedToItsLabel) {
  LaunchResult r = run("");
  expect(at(r, "st.shared.v4.u32 [%r3]"), 8, 32, 32, 0);
  expect(r.banks.total, 8, 32, 32, 0);
  ASSERT_EQ(r.banks.regions.size(), 1u);
  EXPECT_EQ(r.banks.regions[0].label, "FILL");
  ASSERT_EQ(r.banks.lines.size(), 1u);
  EXPECT_EQ(r.banks.lines[0].region, "FILL");
}

// (a) consecutive words: lane l -> word l -> bank l. 1 wavefront.
// (b) stride 2 words: lane l -> word 2l -> bank 2l % 32; banks 0,2,..,30 each hold words w and
//     w + 32: 2-way, 2 wavefronts, 1 extra.
// (c) stride 32 words: every lane in bank 0, 32 distinct words: 32 wavefronts, 31 extra.
// (d) every lane the same word: broadcast, 1 wavefront.
// (d') lane l -> word l / 2: pairs share a word (multicast), 16 banks: 1 wavefront.
TEST_F(Banks, ThirtyTwoBitLoads) {
  LaunchResult r = run(lane_addr(10, 2) + "  ld.shared.u32 %r20, [%r10];\n" +
                       lane_addr(11, 3) + "  ld.shared.u32 %r21, [%r11];\n" +
                       lane_addr(12, 7) + "  ld.shared.u32 %r22, [%r12];\n" +
                       "  ld.shared.u32 %r23, [sm+28];\n" +
                       "  shr.u32 %r13, %r0, 1;\n  shl.b32 %r13, %r13, 2;\n  add.u32 %r13, %r13, %r1;\n"
                       "  ld.shared.u32 %r24, [%r13];\n");
  expect(at(r, "ld.shared.u32 %r20"), 1, 1, 1, 0);
  expect(at(r, "ld.shared.u32 %r21"), 1, 2, 1, 1);
  expect(at(r, "ld.shared.u32 %r22"), 1, 32, 1, 31);
  expect(at(r, "ld.shared.u32 %r23"), 1, 1, 1, 0);
  expect(at(r, "ld.shared.u32 %r24"), 1, 1, 1, 0);
  // FILL's 32 wavefronts (ideal 32) plus these: 1 + 2 + 32 + 1 + 1 = 37, ideal 5.
  expect(r.banks.total, 13, 69, 37, 32);
  ASSERT_EQ(r.banks.regions.size(), 2u);
  EXPECT_EQ(r.banks.regions[1].label, "BODY");
  expect(r.banks.regions[1].tally, 5, 37, 5, 32);
}

// (e) 16 bytes per lane, consecutive chunks: 4 quarter-warps, each 8 lanes x 4 words = words
//     32q .. 32q+31, every bank once: 4 wavefronts, ideal 4.
// (e') 16 bytes at lane * 32: in a quarter-warp lane j touches words 8j..8j+3, so lanes j and
//     j+4 both use banks 8j%32 .. +3 with different words: 2 wavefronts per quarter, 8 in all,
//     4 extra.
TEST_F(Banks, OneHundredTwentyEightBitLoadsGoByQuarterWarp) {
  LaunchResult r = run(lane_addr(10, 4) + "  ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r10];\n" +
                       lane_addr(11, 5) + "  ld.shared.v4.u32 {%r24, %r25, %r26, %r27}, [%r11];\n");
  expect(at(r, "ld.shared.v4.u32 {%r20"), 1, 4, 4, 0);
  expect(at(r, "ld.shared.v4.u32 {%r24"), 1, 8, 4, 4);
}

// (f) 8 bytes per lane: two half-warps.
//  - lane * 8: half-warp h covers words 32h .. 32h+31, each bank once: 1 wavefront each, 2 in
//    all, none extra -- a whole-warp count would see every bank twice (2-way).
//  - lane * 16: in a half-warp lane j touches words 4j, 4j+1; lanes j and j+8 share banks with
//    different words: 2 wavefronts per half, 4 in all, 2 extra.
//  - .v2.u32 at lane * 16 is the same 8 bytes per lane: same count.
TEST_F(Banks, SixtyFourBitLoadsGoByHalfWarp) {
  LaunchResult r = run(lane_addr(10, 3) + "  ld.shared.u64 %rd1, [%r10];\n" +
                       lane_addr(11, 4) + "  ld.shared.u64 %rd2, [%r11];\n" +
                       "  ld.shared.v2.u32 {%r20, %r21}, [%r11];\n");
  expect(at(r, "ld.shared.u64 %rd1"), 1, 2, 2, 0);
  expect(at(r, "ld.shared.u64 %rd2"), 1, 4, 2, 2);
  expect(at(r, "ld.shared.v2.u32 {%r20"), 1, 4, 2, 2);
}

// (g) stores follow the same rules: lane * 8 with 32-bit stores is 2-way (1 extra); every lane
//     writing one word is one wavefront; 16-byte stores at lane * 32 as (e'): 4 extra.
TEST_F(Banks, Stores) {
  LaunchResult r = run(lane_addr(10, 3) + "  st.shared.u32 [%r10], %r0;\n" +
                       "  st.shared.u32 [sm+64], %r0;\n" +
                       lane_addr(11, 5) + "  st.shared.v4.u32 [%r11], {%r0, %r0, %r0, %r0};\n");
  expect(at(r, "st.shared.u32 [%r10]"), 1, 2, 1, 1);
  expect(at(r, "st.shared.u32 [sm+64]"), 1, 1, 1, 0);
  expect(at(r, "st.shared.v4.u32 [%r11]"), 1, 8, 4, 4);
}

// (h) lanes predicated off take no part:
//  - stride 32 words with lanes 0-3 on: 4 distinct words in bank 0: 4 wavefronts, 3 extra.
//  - 8 bytes at lane * 8 with lanes 16-31 on: only the upper half-warp: ideal 1, 1 wavefront.
//  - every lane off: nothing counted on that line.
TEST_F(Banks, PredicatedOffLanesDoNotCount) {
  LaunchResult r = run("  setp.lt.u32 %p1, %r0, 4;\n  setp.ge.u32 %p2, %r0, 16;\n  setp.ge.u32 %p3, %r0, 32;\n" +
                       lane_addr(10, 7) + "  @%p1 ld.shared.u32 %r20, [%r10];\n" +
                       lane_addr(11, 3) + "  @%p2 ld.shared.u64 %rd1, [%r11];\n" +
                       "  @%p3 ld.shared.u32 %r21, [%r10];\n");
  expect(at(r, "@%p1 ld.shared.u32 %r20"), 1, 4, 1, 3);
  expect(at(r, "@%p2 ld.shared.u64 %rd1"), 1, 1, 1, 0);
  expect(at(r, "@%p3 ld.shared.u32 %r21"), 0, 0, 0, 0);
}

// A partial warp (20 threads) is a warp with 12 lanes absent: stride 32 words -> 20 words in
// bank 0: 20 wavefronts, 19 extra.
TEST_F(Banks, PartialWarp) {
  LaunchResult r = run(lane_addr(10, 7) + "  ld.shared.u32 %r20, [%r10];\n", 20);
  expect(at(r, "ld.shared.u32 %r20"), 1, 20, 1, 19);
}

// Generic addresses that land in shared memory count like ld/st.shared (stride 2 words:
// 1 extra each); atom/red on shared too (stride 32 words: 31 extra; one word for every lane:
// 1 wavefront, the model does not count the serialization of same-word atomics).
TEST_F(Banks, GenericAddressesAndAtomics) {
  LaunchResult r = run(lane_addr(10, 3) +
                       "  cvt.u64.u32 %rd1, %r10;\n  cvta.shared.u64 %rd2, %rd1;\n"
                       "  ld.u32 %r20, [%rd2];\n  st.u32 [%rd2], %r20;\n" +
                       lane_addr(11, 7) + "  atom.shared.add.u32 %r21, [%r11], 1;\n" +
                       "  red.shared.add.u32 [sm], 1;\n");
  expect(at(r, "ld.u32 %r20, [%rd2]"), 1, 2, 1, 1);
  expect(at(r, "st.u32 [%rd2]"), 1, 2, 1, 1);
  expect(at(r, "atom.shared.add.u32 %r21"), 1, 32, 1, 31);
  expect(at(r, "red.shared.add.u32 [sm]"), 1, 1, 1, 0);
}

// Per line over a loop, and per label region: the conflicting load runs 3 times in LOOP
// (3 accesses, 3 extra), the clean one once in EPI.
TEST_F(Banks, LoopAndEpilogueRegions) {
  LaunchResult r = run("  mov.u32 %r30, 0;\n" + lane_addr(10, 3) + lane_addr(11, 2) +
                       "LOOP:\n  ld.shared.u32 %r20, [%r10];\n  add.u32 %r30, %r30, 1;\n"
                       "  setp.lt.u32 %p1, %r30, 3;\n  @%p1 bra LOOP;\n"
                       "EPI:\n  ld.shared.u32 %r21, [%r11];\n");
  expect(at(r, "ld.shared.u32 %r20"), 3, 6, 3, 3);
  expect(at(r, "ld.shared.u32 %r21"), 1, 1, 1, 0);
  ASSERT_EQ(r.banks.regions.size(), 3u);
  EXPECT_EQ(r.banks.regions[0].label, "FILL");
  EXPECT_EQ(r.banks.regions[1].label, "LOOP");
  expect(r.banks.regions[1].tally, 3, 6, 3, 3);
  EXPECT_EQ(r.banks.regions[2].label, "EPI");
  expect(r.banks.regions[2].tally, 1, 1, 1, 0);
  const std::string j = launch_json(r);
  EXPECT_NE(j.find("\"bank_conflicts\":{\"accesses\":12,\"wavefronts\":39,\"ideal\":36,\"conflicts\":3,\"lines\":["),
            std::string::npos) << j;
  EXPECT_NE(j.find("{\"label\":\"LOOP\",\"accesses\":3,\"wavefronts\":6,\"ideal\":3,\"conflicts\":3}"), std::string::npos) << j;
}

// Global and local accesses are not shared-memory accesses: nothing counted.
TEST_F(Banks, OtherSpacesAreNotCounted) {
  LaunchResult r = run("  .local .align 8 .b8 buf[8];\n  st.local.u32 [buf], %r0;\n  ld.local.u32 %r20, [buf];\n");
  expect(at(r, "st.local.u32 [buf]"), 0, 0, 0, 0);
  expect(at(r, "ld.local.u32 %r20"), 0, 0, 0, 0);
  expect(r.banks.total, 8, 32, 32, 0);
}

// bank_wavefronts (a fast path for conflict-free and broadcast phases, a hashed count of
// distinct words otherwise) against the rules written out directly: for each phase, the set of
// words of each bank. Random lanes, widths and aligned offsets packed into 512 bytes so that
// conflicts, broadcasts and partial phases are all frequent.
TEST(BankWavefronts, MatchRulesCountedDirectly) {
  std::mt19937 rng(7);
  const std::uint32_t widths[] = {1, 2, 4, 8, 16, 32};
  int conflicting = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::uint32_t bytes = widths[rng() % 6];
    const std::uint32_t lanes = trial % 4 == 0 ? ~0u : static_cast<std::uint32_t>(rng()) | 1u;
    const std::uint32_t align = std::min<std::uint32_t>(bytes, 16);
    std::uint32_t offset[32];
    for (auto& o : offset) o = static_cast<std::uint32_t>(rng() % (512 / align)) * align;
    const std::uint32_t words = bytes <= 4 ? 1 : bytes / 4, per_phase = 32 / words;
    std::uint32_t wavefronts = 0, ideal = 0;
    for (std::uint32_t base = 0; base < 32; base += per_phase) {
      std::set<std::uint32_t> bank[32];
      bool active = false;
      for (std::uint32_t l = base; l < base + per_phase; ++l) {
        if (!(lanes & (1u << l))) continue;
        active = true;
        for (std::uint32_t k = 0; k < words; ++k) bank[(offset[l] / 4 + k) % 32].insert(offset[l] / 4 + k);
      }
      if (!active) continue;
      ++ideal;
      std::size_t most = 0;
      for (const auto& b : bank) most = std::max(most, b.size());
      wavefronts += static_cast<std::uint32_t>(most);
    }
    const BankCount c = bank_wavefronts(offset, lanes, bytes);
    ASSERT_EQ(c.wavefronts, wavefronts) << "trial " << trial << ", " << bytes << " bytes";
    ASSERT_EQ(c.ideal, ideal) << "trial " << trial;
    conflicting += wavefronts > ideal;
  }
  EXPECT_GT(conflicting, 10000);  // the slow path was exercised
}

}  // namespace
}  // namespace mgpu::emu
