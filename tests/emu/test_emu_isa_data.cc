// Spec tests for core/emu/insns/data.cc: PTX ISA 9.7.9.1 mov (vector pack/unpack: "the first
// element is in the least significant bits"), 9.7.9.8 ld / 9.7.9.9 st (.v2/.v4 vectors;
// "destination register wider than the load type: signed types are sign-extended, unsigned and
// bit-size types zero-extended"), 9.7.13.5 atom and 9.7.13.6 red (add/min/max/exch/cas/inc/dec
// return the old value; inc: "(old >= b) ? 0 : old+1"; dec: "((old == 0) || (old > b)) ? b :
// old-1"; cas: "(old == b) ? c : old") on .global and .shared.
#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;

TEST_F(Isa, MovPackUnpack) {
  auto o = run(
      "  mov.b32 %r1, 0x11111111;\n  mov.b32 %r2, 0x22222222;\n"
      "  mov.b64 %rd1, {%r1, %r2};\n  st.global.u64 [%rd63], %rd1;\n"
      "  mov.b64 %rd2, 0xAAAAAAAABBBBBBBB;\n  mov.b64 {%r3, %r4}, %rd2;\n"
      "  st.global.u32 [%rd63+8], %r3;\n  st.global.u32 [%rd63+16], %r4;\n"
      "  mov.b16 %h1, 0x1234;\n  mov.b16 %h2, 0xABCD;\n  mov.b32 %r5, {%h1, %h2};\n  st.global.u32 [%rd63+24], %r5;\n"
      "  mov.b32 {%h3, %h4}, %r5;\n  st.global.u16 [%rd63+32], %h4;\n  st.global.u16 [%rd63+40], %h3;\n",
      {}, 6);
  EXPECT_EQ(o[0], 0x2222222211111111ull);
  EXPECT_EQ(o[1], 0xBBBBBBBBu);
  EXPECT_EQ(o[2], 0xAAAAAAAAu);
  EXPECT_EQ(o[3], 0xABCD1234u);
  EXPECT_EQ(o[4], 0xABCDu);
  EXPECT_EQ(o[5], 0x1234u);
}

TEST_F(Isa, LdStVectors) {
  auto o = run(
      "  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd62];\n"
      "  st.global.v4.u32 [%rd63+16], {%r4, %r3, %r2, %r1};\n"
      "  ld.global.v2.u64 {%rd1, %rd2}, [%rd62+16];\n"
      "  st.global.v2.u64 [%rd63+32], {%rd2, %rd1};\n"
      "  ld.global.v2.u32 {%r5, %r6}, [%rd62+8];\n"
      "  st.global.u32 [%rd63], %r6;\n  st.global.u32 [%rd63+4], %r5;\n",
      {0x0000000200000001ull, 0x0000000400000003ull, 0x5555ull, 0x6666ull}, 6);
  EXPECT_EQ(o[0], 0x0000000300000004ull);  // {r6, r5} = {4, 3}
  EXPECT_EQ(o[2], 0x0000000300000004ull);  // {r4, r3} = {4, 3}
  EXPECT_EQ(o[3], 0x0000000100000002ull);  // {r2, r1}
  EXPECT_EQ(o[4], 0x6666u);
  EXPECT_EQ(o[5], 0x5555u);
}

TEST_F(Isa, NarrowLoadsExtend) {
  auto o = run(
      "  ld.global.s8 %r1, [%rd62];\n  st.global.u32 [%rd63], %r1;\n"
      "  ld.global.u8 %r2, [%rd62];\n  st.global.u32 [%rd63+8], %r2;\n"
      "  ld.global.s16 %r3, [%rd62+8];\n  st.global.u32 [%rd63+16], %r3;\n"
      "  ld.global.u16 %r4, [%rd62+8];\n  st.global.u32 [%rd63+24], %r4;\n"
      "  ld.global.s32 %rd1, [%rd62+16];\n  st.global.u64 [%rd63+32], %rd1;\n"
      "  ld.global.u32 %rd2, [%rd62+16];\n  st.global.u64 [%rd63+40], %rd2;\n"
      "  ld.global.s8 %rd3, [%rd62];\n  st.global.u64 [%rd63+48], %rd3;\n"
      "  st.global.u8 [%rd63+56], %r4;\n",  // st of a narrower type stores the low bits
      {0x80, 0x8000, 0x80000000}, 8);
  EXPECT_EQ(o[0], 0xFFFFFF80u);
  EXPECT_EQ(o[1], 0x80u);
  EXPECT_EQ(o[2], 0xFFFF8000u);
  EXPECT_EQ(o[3], 0x8000u);
  EXPECT_EQ(o[4], 0xFFFFFFFF80000000ull);
  EXPECT_EQ(o[5], 0x80000000ull);
  EXPECT_EQ(o[6], 0xFFFFFFFFFFFFFF80ull);
  EXPECT_EQ(o[7], 0x00u);
}

// Each atomic on a cell holding `old`, storing the returned old value and the cell afterwards.
std::string atom_body(const std::string& space) {
  const bool sh = space == "shared";
  std::string addr = sh ? "[sm]" : "[%rd62]";
  std::string b;
  // in[0] = initial cell, in[1] = b, in[2] = c (cas)
  b += "  ld.global.u32 %r1, [%rd62];\n  ld.global.u32 %r2, [%rd62+8];\n  ld.global.u32 %r3, [%rd62+16];\n";
  if (sh) b += "  st.shared.u32 [sm], %r1;\n";
  return b + "  OP\n" + (sh ? "  ld.shared.u32 %r5, [sm];\n" : "  ld.global.u32 %r5, [%rd62];\n") +
         "  st.global.u32 [%rd63], %r4;\n  st.global.u32 [%rd63+8], %r5;\n";
}

struct AtomCase {
  const char* op;
  std::uint32_t old, b, c, ret, after;
};

TEST_F(Isa, AtomOperationsGlobalAndShared) {
  const AtomCase cases[] = {
      {"add.u32", 5, 7, 0, 5, 12},
      {"add.u32", 0xFFFFFFFF, 2, 0, 0xFFFFFFFF, 1},
      {"min.s32", 5, 0xFFFFFFFD, 0, 5, 0xFFFFFFFD},       // min(5, -3)
      {"min.u32", 5, 0xFFFFFFFD, 0, 5, 5},
      {"max.s32", 0xFFFFFFFD, 5, 0, 0xFFFFFFFD, 5},
      {"max.u32", 0xFFFFFFFD, 5, 0, 0xFFFFFFFD, 0xFFFFFFFD},
      {"exch.b32", 5, 9, 0, 5, 9},
      {"cas.b32", 5, 5, 77, 5, 77},                        // compare matches
      {"cas.b32", 5, 6, 77, 5, 5},                         // no match
      {"inc.u32", 3, 3, 0, 3, 0},                          // old >= b: wraps to 0
      {"inc.u32", 2, 3, 0, 2, 3},
      {"dec.u32", 0, 5, 0, 0, 5},                          // old == 0: b
      {"dec.u32", 7, 5, 0, 7, 5},                          // old > b: b
      {"dec.u32", 3, 5, 0, 3, 2},
      {"and.b32", 0xF0, 0x3C, 0, 0xF0, 0x30},
      {"or.b32", 0xF0, 0x0F, 0, 0xF0, 0xFF},
      {"xor.b32", 0xFF, 0x0F, 0, 0xFF, 0xF0},
  };
  for (const char* space : {"global", "shared"}) {
    const std::string globals = std::string(space) == "shared" ? ".shared .align 8 .b8 sm[16];" : "";
    for (const AtomCase& c : cases) {
      std::string body = atom_body(space);
      const bool cas = std::string(c.op).rfind("cas", 0) == 0;
      std::string insn = std::string("atom.") + space + "." + c.op + " %r4, " + (std::string(space) == "shared" ? "[sm]" : "[%rd62]") +
                         ", %r2" + (cas ? ", %r3;" : ";");
      body.replace(body.find("OP"), 2, insn);
      auto o = run(body, {c.old, c.b, c.c}, 2, cfg(), globals);
      EXPECT_EQ(o[0], c.ret) << space << " " << c.op << " returned";
      EXPECT_EQ(o[1], c.after) << space << " " << c.op << " stored";
    }
  }
}

TEST_F(Isa, AtomWideAndFloatAndRed) {
  auto o = run(
      "  atom.global.add.u64 %rd1, [%rd62], 0x100000000;\n  st.global.u64 [%rd63], %rd1;\n"
      "  atom.global.add.f32 %r1, [%rd62+8], 0f3FC00000;\n  st.global.u32 [%rd63+8], %r1;\n"
      "  red.global.add.u32 [%rd62+16], 5;\n"
      "  red.global.max.s32 [%rd62+24], -4;\n"
      "  atom.global.cas.b64 %rd2, [%rd62+32], 7, 0x123456789;\n  st.global.u64 [%rd63+16], %rd2;\n"
      "  ld.global.u64 %rd3, [%rd62];\n  st.global.u64 [%rd63+24], %rd3;\n"
      "  ld.global.u32 %r3, [%rd62+8];\n  st.global.u32 [%rd63+32], %r3;\n"
      "  ld.global.u32 %r4, [%rd62+16];\n  st.global.u32 [%rd63+40], %r4;\n"
      "  ld.global.u32 %r5, [%rd62+24];\n  st.global.u32 [%rd63+48], %r5;\n"
      "  ld.global.u64 %rd4, [%rd62+32];\n  st.global.u64 [%rd63+56], %rd4;\n",
      {0xFFFFFFFFull, f32(1.0f), 10, 0xFFFFFFF6 /* -10 */, 7}, 8);
  EXPECT_EQ(o[0], 0xFFFFFFFFull);
  EXPECT_EQ(o[1], f32(1.0f));
  EXPECT_EQ(o[2], 7u);
  EXPECT_EQ(o[3], 0x1FFFFFFFFull);
  EXPECT_EQ(o[4], f32(2.5f));
  EXPECT_EQ(o[5], 15u);
  EXPECT_EQ(o[6], 0xFFFFFFFCu);  // max(-10, -4)
  EXPECT_EQ(o[7], 0x123456789ull);
}

// 256 threads of 2 CTAs add 1 to one cell: every old value 0..255 is returned exactly once.
TEST_F(Isa, AtomIsAtomicAcrossWarpsAndCtas) {
  for (std::uint64_t seed : {1, 2, 3}) {
    auto o = run(
        "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mad.lo.u32 %r3, %r2, 128, %r1;\n"
        "  atom.global.add.u32 %r4, [%rd62], 1;\n"
        "  mul.wide.u32 %rd1, %r4, 8;\n  add.u64 %rd2, %rd63, %rd1;\n  atom.global.add.u32 %r5, [%rd2], 1;\n",
        {0}, 256, cfg(128, 2, seed));
    for (int i = 0; i < 256; ++i) ASSERT_EQ(o[i], 1u) << "old value " << i << " seed " << seed;
  }
}

}  // namespace
}  // namespace mgpu::emu::isa
