// Spec tests for core/emu/insns/logic.cc: PTX ISA 9.7.8 "Logic and Shift Instructions" (and, or,
// xor, not, cnot, lop3, shl, shr) and the bit instructions of 9.7.1 (popc, clz, bfe, bfi, brev, bfind)
// and 9.7.9.7 prmt. Expected values are worked out by hand from each section's pseudocode.
#include "isa_harness.h"

namespace mgpu::emu::isa {
namespace {

using Isa = IsaTest;

// 9.7.8.1-.4 and/or/xor/not: bitwise on .b16/.b32/.b64 and on .pred.
TEST_F(Isa, BitwiseB32B64) {
  EXPECT_EQ(op("and.b32", 32, {R(0xF0F0F0F0), R(0xFF00FF00)}), 0xF000F000u);
  EXPECT_EQ(op("or.b32", 32, {R(0xF0F0F0F0), R(0xFF00FF00)}), 0xFFF0FFF0u);
  EXPECT_EQ(op("xor.b32", 32, {R(0xF0F0F0F0), R(0xFF00FF00)}), 0x0FF00FF0u);
  EXPECT_EQ(op("not.b32", 32, {R(0xF0F0F0F0)}), 0x0F0F0F0Fu);
  EXPECT_EQ(op("and.b64", 64, {RD(0xF0F0F0F0F0F0F0F0ull), RD(0x00000000FFFFFFFFull)}), 0x00000000F0F0F0F0ull);
  EXPECT_EQ(op("or.b64", 64, {RD(0xF000000000000000ull), RD(1)}), 0xF000000000000001ull);
  EXPECT_EQ(op("xor.b64", 64, {RD(~0ull), RD(0xFFFF)}), 0xFFFFFFFFFFFF0000ull);
  EXPECT_EQ(op("not.b64", 64, {RD(0)}), ~0ull);
  EXPECT_EQ(op("not.b16", 16, {H(0x00FF)}), 0xFF00u);
  // 9.7.8.5 cnot: "d = (a==0) ? 1 : 0".
  EXPECT_EQ(op("cnot.b32", 32, {R(0)}), 1u);
  EXPECT_EQ(op("cnot.b32", 32, {R(5)}), 0u);
}

TEST_F(Isa, BitwisePredicates) {
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(op("and.pred", 1, {P(a), P(b)}), static_cast<std::uint64_t>(a & b)) << a << b;
      EXPECT_EQ(op("or.pred", 1, {P(a), P(b)}), static_cast<std::uint64_t>(a | b)) << a << b;
      EXPECT_EQ(op("xor.pred", 1, {P(a), P(b)}), static_cast<std::uint64_t>(a ^ b)) << a << b;
    }
  EXPECT_EQ(op("not.pred", 1, {P(false)}), 1u);
  EXPECT_EQ(op("not.pred", 1, {P(true)}), 0u);
}

// 9.7.8.7 shl / 9.7.8.8 shr: b is .u32; "shift amounts greater than the register width N are
// clamped to N"; "signed shifts fill with the sign bit, unsigned and untyped shifts fill with 0".
TEST_F(Isa, ShiftsClampAndFill) {
  EXPECT_EQ(op("shl.b32", 32, {R(1), R(31)}), 0x80000000u);
  EXPECT_EQ(op("shl.b32", 32, {R(1), R(32)}), 0u);
  EXPECT_EQ(op("shl.b32", 32, {R(1), R(100)}), 0u);
  EXPECT_EQ(op("shl.b64", 64, {RD(1), R(63)}), 0x8000000000000000ull);
  EXPECT_EQ(op("shl.b64", 64, {RD(1), R(64)}), 0u);
  EXPECT_EQ(op("shl.b16", 16, {H(1), R(15)}), 0x8000u);
  EXPECT_EQ(op("shl.b16", 16, {H(1), R(16)}), 0u);
  EXPECT_EQ(op("shr.u32", 32, {R(0x80000000), R(31)}), 1u);
  EXPECT_EQ(op("shr.u32", 32, {R(0x80000000), R(32)}), 0u);
  EXPECT_EQ(op("shr.u32", 32, {R(0x80000000), R(0xFFFFFFFF)}), 0u);
  EXPECT_EQ(op("shr.b32", 32, {R(0x80000000), R(4)}), 0x08000000u);
  EXPECT_EQ(op("shr.s32", 32, {R(0x80000000), R(4)}), 0xF8000000u);
  EXPECT_EQ(op("shr.s32", 32, {R(0x80000000), R(31)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("shr.s32", 32, {R(0x80000000), R(40)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("shr.s32", 32, {R(0x40000000), R(40)}), 0u);
  EXPECT_EQ(op("shr.s64", 64, {RD(0x8000000000000000ull), R(63)}), ~0ull);
  EXPECT_EQ(op("shr.s64", 64, {RD(0x8000000000000000ull), R(64)}), ~0ull);
  EXPECT_EQ(op("shr.s64", 64, {RD(0x8000000000000000ull), R(200)}), ~0ull);
  EXPECT_EQ(op("shr.u64", 64, {RD(0x8000000000000000ull), R(64)}), 0u);
  EXPECT_EQ(op("shr.u64", 64, {RD(0x8000000000000000ull), R(60)}), 8u);
  EXPECT_EQ(op("shr.s16", 16, {H(0x8000), R(20)}), 0xFFFFu);
}

// 9.7.1.x bfe pseudocode: msb = 31|63; pos = b & 0xff; len = c & 0xff;
// sbit = (unsigned || len==0) ? 0 : a[min(pos+len-1, msb)];
// d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit.
TEST_F(Isa, BfeSignedAndUnsigned) {
  EXPECT_EQ(op("bfe.u32", 32, {R(0x12345678), R(8), R(8)}), 0x56u);
  EXPECT_EQ(op("bfe.u32", 32, {R(0x12345678), R(28), R(8)}), 0x1u);  // field runs off the top: zeros
  EXPECT_EQ(op("bfe.u32", 32, {R(0x12345678), R(32), R(8)}), 0u);
  EXPECT_EQ(op("bfe.u32", 32, {R(0x12345678), R(4), R(0)}), 0u);
  EXPECT_EQ(op("bfe.u32", 32, {R(0x12345678), R(0), R(255)}), 0x12345678u);
  EXPECT_EQ(op("bfe.u32", 32, {R(0x12345678), R(0x104), R(0x104)}), 0x7u);  // only the low 8 bits of b, c count
  EXPECT_EQ(op("bfe.s32", 32, {R(0x000000F0), R(4), R(4)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("bfe.s32", 32, {R(0x00000070), R(4), R(4)}), 7u);
  EXPECT_EQ(op("bfe.s32", 32, {R(0x80000000), R(31), R(1)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("bfe.s32", 32, {R(0xF0000000), R(4), R(0)}), 0u);  // len 0: sbit 0
  // pos+len-1 beyond msb: the field's bits above msb read as sbit = a[msb].
  EXPECT_EQ(op("bfe.s32", 32, {R(0x80000000), R(28), R(8)}), 0xFFFFFFF8u);
  EXPECT_EQ(op("bfe.s32", 32, {R(0x70000000), R(28), R(8)}), 0x7u);
  // pos beyond msb: every bit is sbit = a[msb].
  EXPECT_EQ(op("bfe.s32", 32, {R(0x80000000), R(40), R(4)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("bfe.s32", 32, {R(0x7FFFFFFF), R(40), R(4)}), 0u);
  EXPECT_EQ(op("bfe.u64", 64, {RD(0xFEDCBA9876543210ull), R(32), R(16)}), 0xBA98u);
  EXPECT_EQ(op("bfe.s64", 64, {RD(0x8000000000000000ull), R(60), R(8)}), 0xFFFFFFFFFFFFFFF8ull);
  EXPECT_EQ(op("bfe.s64", 64, {RD(0x0000000080000000ull), R(16), R(16)}), 0xFFFFFFFFFFFF8000ull);
}

// bfi pseudocode: f = b; for (i = 0; i < len && pos+i <= msb; i++) f[pos+i] = a[i].
TEST_F(Isa, BfiInsertsAndClips) {
  EXPECT_EQ(op("bfi.b32", 32, {R(0xFF), R(0x12345678), R(8), R(8)}), 0x1234FF78u);
  EXPECT_EQ(op("bfi.b32", 32, {R(0xFF), R(0x12345678), R(28), R(8)}), 0xF2345678u);
  EXPECT_EQ(op("bfi.b32", 32, {R(0xFF), R(0x12345678), R(32), R(8)}), 0x12345678u);
  EXPECT_EQ(op("bfi.b32", 32, {R(0xFF), R(0x12345678), R(8), R(0)}), 0x12345678u);
  EXPECT_EQ(op("bfi.b64", 64, {RD(0xABCD), RD(0), R(48), R(16)}), 0xABCD000000000000ull);
}

// popc, clz (d is .u32; clz of 0 is the width), brev.
TEST_F(Isa, PopcClzBrev) {
  EXPECT_EQ(op("popc.b32", 32, {R(0xF0F0F0F1)}), 17u);
  EXPECT_EQ(op("popc.b32", 32, {R(0)}), 0u);
  EXPECT_EQ(op("popc.b64", 32, {RD(~0ull)}), 64u);
  EXPECT_EQ(op("clz.b32", 32, {R(0)}), 32u);
  EXPECT_EQ(op("clz.b32", 32, {R(1)}), 31u);
  EXPECT_EQ(op("clz.b32", 32, {R(0x80000000)}), 0u);
  EXPECT_EQ(op("clz.b64", 32, {RD(1)}), 63u);
  EXPECT_EQ(op("clz.b64", 32, {RD(0)}), 64u);
  EXPECT_EQ(op("brev.b32", 32, {R(1)}), 0x80000000u);
  EXPECT_EQ(op("brev.b32", 32, {R(0x12345678)}), 0x1E6A2C48u);
  EXPECT_EQ(op("brev.b64", 64, {RD(1)}), 0x8000000000000000ull);
}

// 9.7.9.7 prmt (default mode): bytes {b, a} = {b7..b4, b3..b0}; each selector nibble of c picks a
// byte by its low 3 bits, and its msb replicates that byte's sign bit instead.
TEST_F(Isa, PrmtDefaultMode) {
  const std::uint64_t a = 0x33221100, b = 0x77665544;
  EXPECT_EQ(op("prmt.b32", 32, {R(a), R(b), R(0x3210)}), 0x33221100u);
  EXPECT_EQ(op("prmt.b32", 32, {R(a), R(b), R(0x7654)}), 0x77665544u);
  EXPECT_EQ(op("prmt.b32", 32, {R(a), R(b), R(0x0123)}), 0x00112233u);
  EXPECT_EQ(op("prmt.b32", 32, {R(a), R(b), R(0x4567)}), 0x44556677u);
  EXPECT_EQ(op("prmt.b32", 32, {R(a), R(b), R(0x5140)}), 0x55114400u);
  // a's bytes: 01 FF 80 7F (b0..b3); B -> sign of 7F = 00, 1 -> FF, A -> sign of 80 = FF, 0 -> 01.
  EXPECT_EQ(op("prmt.b32", 32, {R(0x7F80FF01), R(0), R(0x0A1B)}), 0x01FFFF00u);
}

// 9.7.8.6 lop3: immLut = F(0xF0, 0xCC, 0xAA) for the wanted F of (a, b, c).
TEST_F(Isa, Lop3Tables) {
  const Src a = R(0x0000FFFF), b = R(0x00FF00FF), c = R(0x0F0F0F0F);
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0xF0"), 0x0000FFFFu);
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0xCC"), 0x00FF00FFu);
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0xAA"), 0x0F0F0F0Fu);
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0x96"), 0x0FF0F00Fu);  // a ^ b ^ c
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0x80"), 0x0000000Fu);  // a & b & c
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0xFE"), 0x0FFFFFFFu);  // a | b | c
  EXPECT_EQ(op("lop3.b32", 32, {a, b, c}, "0xE8"), 0x000F0FFFu);  // majority
}

// 9.7.1.16 "Integer Arithmetic Instructions: bfind", worked from its semantics:
//   msb = 31 or 63; for .s types a negative a is replaced by ~a; d = the highest i with a[i] = 1,
//   or 0xffffffff when there is none; .shiftamt gives msb - d instead (0xffffffff stays).
// The destination is .u32 whatever the source type.
TEST_F(Isa, BfindFindsTheMostSignificantNonSignBit) {
  EXPECT_EQ(op("bfind.u32", 32, {R(0)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("bfind.u32", 32, {R(1)}), 0u);
  EXPECT_EQ(op("bfind.u32", 32, {R(0x00010000)}), 16u);
  EXPECT_EQ(op("bfind.u32", 32, {R(0x8000F000)}), 31u);
  EXPECT_EQ(op("bfind.u64", 32, {RD(1ull << 40)}), 40u);
  EXPECT_EQ(op("bfind.u64", 32, {RD(0x8000000000000001ull)}), 63u);
  EXPECT_EQ(op("bfind.u64", 32, {RD(0)}), 0xFFFFFFFFu);
  // Signed: the most significant 1 of a non-negative value, the most significant 0 of a negative one.
  EXPECT_EQ(op("bfind.s32", 32, {R(5)}), 2u);
  EXPECT_EQ(op("bfind.s32", 32, {R(0xFFFFFFFE)}), 0u);           // -2: ~a = 1
  EXPECT_EQ(op("bfind.s32", 32, {R(0xFFFFFFFF)}), 0xFFFFFFFFu);  // -1: no non-sign bit
  EXPECT_EQ(op("bfind.s32", 32, {R(0x80000000)}), 30u);          // INT_MIN: ~a = 0x7fffffff
  EXPECT_EQ(op("bfind.s32", 32, {R(0)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("bfind.s64", 32, {RD(0xFFFFFF0000000000ull)}), 39u);  // -(2^40): ~a = 2^40 - 1
  EXPECT_EQ(op("bfind.s64", 32, {RD(0x4000000000000000ull)}), 62u);
  // .shiftamt: the left shift that brings the found bit to the top.
  EXPECT_EQ(op("bfind.shiftamt.u32", 32, {R(1)}), 31u);
  EXPECT_EQ(op("bfind.shiftamt.u32", 32, {R(0x80000000)}), 0u);
  EXPECT_EQ(op("bfind.shiftamt.u32", 32, {R(0)}), 0xFFFFFFFFu);
  EXPECT_EQ(op("bfind.shiftamt.s32", 32, {R(0xFFFFFFFE)}), 31u);
  EXPECT_EQ(op("bfind.shiftamt.s64", 32, {RD(1)}), 63u);
  EXPECT_EQ(op("bfind.shiftamt.u64", 32, {RD(0)}), 0xFFFFFFFFu);
}

// The ISA's types are .u32, .u64, .s32, .s64: any other is refused when the module is loaded,
// naming the instruction, rather than run as a guess.
TEST_F(Isa, BfindOfAnotherTypeIsRefused) {
  EXPECT_THROW(dev.load(module("  bfind.b32 %r0, %r1;\n")), Fault);
  EXPECT_THROW(dev.load(module("  bfind.u16 %r0, %h1;\n")), Fault);
  EXPECT_NO_THROW(dev.load(module("  bfind.s64 %r0, %rd1;\n")));
}

}  // namespace
}  // namespace mgpu::emu::isa
