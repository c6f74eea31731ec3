// Spec-derived tests for core/emu/engines/smem_layout: swizzle, wgmma descriptors, operand
// addresses, register fragments. Every expectation is written from the PTX ISA text and
// cross-checked against CUTLASS/CuTe and JAX Mosaic GPU (cited beside each test); none is
// computed by calling the function under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "core/emu/engines/smem_layout.h"

namespace mgpu::emu {
namespace {

// ---------------------------------------------------------------------------------------------
// Swizzle
// ---------------------------------------------------------------------------------------------

// PTX ISA 5.5.7 "Swizzling Modes" (16-byte atomicity): tables of the destination layout, one
// row per 128-byte shared-memory line, each cell a 16-byte chunk, the number the logical chunk
// stored at that position; "... Pattern repeats ...". 32B starts 256-byte aligned, 64B 512,
// 128B 1024.
const int kIsa32[2][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
const int kIsa64[4][8] = {{0, 1, 2, 3, 4, 5, 6, 7},
                          {1, 0, 3, 2, 5, 4, 7, 6},
                          {2, 3, 0, 1, 6, 7, 4, 5},
                          {3, 2, 1, 0, 7, 6, 5, 4}};
const int kIsa128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6},
                           {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
                           {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                           {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};

int isa_table(Swizzle s, int line, int pos) {
  switch (s) {
    case Swizzle::B32: return kIsa32[line % 2][pos];
    case Swizzle::B64: return kIsa64[line % 4][pos];
    case Swizzle::B128: return kIsa128[line % 8][pos];
    case Swizzle::None: return pos;
  }
  return -1;
}

// CuTe Swizzle<B,M,S> (cute/swizzle.hpp): yyy_msk = ((1<<B)-1) << (M+S); apply(o) =
// o ^ ((o & yyy_msk) >> S). GMMA uses M=4, S=3 and B=1/2/3 for SW32/SW64/SW128
// (mma_traits_sm90_gmma.hpp, Layout_*_SW{32,64,128}_Atom_Bits). Written out here on its own.
std::uint32_t cute_swizzle(std::uint32_t o, int B) {
  if (B == 0) return o;
  const std::uint32_t yyy = ((1u << B) - 1) << (4 + 3);
  return o ^ ((o & yyy) >> 3);
}

const Swizzle kModes[] = {Swizzle::B32, Swizzle::B64, Swizzle::B128};

TEST(EmuSwizzle, SwizzleBytesPerMode) {
  EXPECT_EQ(swizzle_bytes(Swizzle::None), 0);
  EXPECT_EQ(swizzle_bytes(Swizzle::B32), 32);
  EXPECT_EQ(swizzle_bytes(Swizzle::B64), 64);
  EXPECT_EQ(swizzle_bytes(Swizzle::B128), 128);
}

TEST(EmuSwizzle, NoneIsIdentity) {
  for (std::uint32_t a = 0; a < 4096; ++a) EXPECT_EQ(swizzle_address(a, Swizzle::None), a);
}

// Every byte of two whole 1024-byte atoms (at 0 and at 1024, plus one high in shared memory):
// the byte of logical chunk T[line][pos] of a line lands at position `pos` of the same line,
// byte for byte (ISA 5.5.7 tables above).
TEST(EmuSwizzle, EveryByteOfTwoAtomsMatchesIsaTables) {
  for (Swizzle s : kModes) {
    for (std::uint32_t atom : {0u, 1024u, 0x2DC00u}) {
      for (int line = 0; line < 8; ++line) {
        for (int pos = 0; pos < 8; ++pos) {
          const int logical_chunk = isa_table(s, line, pos);
          for (std::uint32_t byte = 0; byte < 16; ++byte) {
            const std::uint32_t logical = atom + 128 * line + 16 * logical_chunk + byte;
            const std::uint32_t physical = atom + 128 * line + 16 * pos + byte;
            EXPECT_EQ(swizzle_address(logical, s), physical)
                << "mode " << swizzle_bytes(s) << " atom " << atom << " line " << line << " pos " << pos
                << " byte " << byte;
          }
        }
      }
    }
  }
}

// The map is a bijection of each 1024-byte atom onto itself, never leaves its 128-byte line,
// and is an involution (XOR); the ISA's tables are symmetric permutations.
TEST(EmuSwizzle, BijectionWithinEachAtom) {
  for (Swizzle s : kModes) {
    for (std::uint32_t atom : {0u, 1024u, 7168u}) {
      std::set<std::uint32_t> image;
      for (std::uint32_t off = 0; off < 1024; ++off) {
        const std::uint32_t a = atom + off;
        const std::uint32_t p = swizzle_address(a, s);
        EXPECT_EQ(p / 128, a / 128) << "left its 128-byte line";
        EXPECT_EQ(p % 16, a % 16) << "16-byte chunks stay intact";
        EXPECT_EQ(swizzle_address(p, s), a) << "not an involution";
        image.insert(p);
      }
      EXPECT_EQ(image.size(), 1024u);
      EXPECT_EQ(*image.begin(), atom);
      EXPECT_EQ(*image.rbegin(), atom + 1023);
    }
  }
}

// Independent formula: CuTe's Swizzle<B,4,3> over all of a 256 KiB shared window (step 4).
TEST(EmuSwizzle, MatchesCuteSwizzleB43) {
  for (Swizzle s : kModes) {
    const int B = static_cast<int>(s);  // CU_TENSOR_MAP_SWIZZLE_32B/64B/128B = 1/2/3
    ASSERT_EQ(swizzle_bytes(s), 16 << B);
    for (std::uint32_t a = 0; a < (1u << 18); a += 4) EXPECT_EQ(swizzle_address(a, s), cute_swizzle(a, B));
  }
}

// The pattern period: 32B repeats every 256 bytes, 64B every 512, 128B every 1024 (ISA 5.5.7
// "starting address of the repeating pattern").
TEST(EmuSwizzle, PatternPeriod) {
  const std::pair<Swizzle, std::uint32_t> periods[] = {
      {Swizzle::B32, 256}, {Swizzle::B64, 512}, {Swizzle::B128, 1024}};
  for (auto [s, period] : periods) {
    for (std::uint32_t a = 0; a < period; ++a) {
      EXPECT_EQ(swizzle_address(a + period, s), swizzle_address(a, s) + period);
      EXPECT_EQ(swizzle_address(a + 5 * period, s), swizzle_address(a, s) + 5 * period);
    }
    // ... and not earlier: the line at period/2 is permuted differently from line 0.
    bool differs = false;
    for (std::uint32_t a = 0; a < 128; ++a)
      differs |= (swizzle_address(a + period / 2, s) - period / 2) != swizzle_address(a, s);
    EXPECT_TRUE(differs) << swizzle_bytes(s);
  }
}

// ---------------------------------------------------------------------------------------------
// Descriptor decoding
// ---------------------------------------------------------------------------------------------

// PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format": bits 13-0 start, 29-16 LBO, 45-32 SBO
// (each matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4), 51-49 base offset, 63-62 swizzle
// (0 none, 1 128B, 2 64B, 3 32B). CuTe GmmaDescriptor (cute/arch/mma_sm90_desc.hpp) has the same
// bitfields: start_address_:14 @0, leading_byte_offset_:14 @16, stride_byte_offset_:14 @32,
// base_offset_:3 @49, layout_type_:2 @62 with B128=1, B64=2, B32=3.
TEST(EmuDescriptor, HandBuiltLiteral) {
  // start 0x400, LBO 16, SBO 1024, 128B swizzle: 0x40 | 0x1<<16 | 0x40<<32 | 1<<62.
  MatrixDescriptor m = decode_wgmma_descriptor(0x4000004000010040ull);
  EXPECT_EQ(m.start, 0x400u);
  EXPECT_EQ(m.leading, 16u);
  EXPECT_EQ(m.stride, 1024u);
  EXPECT_EQ(m.base_offset, 0u);
  EXPECT_EQ(m.swizzle, Swizzle::B128);
}

TEST(EmuDescriptor, EveryFieldEverySwizzleCode) {
  const Swizzle by_code[4] = {Swizzle::None, Swizzle::B128, Swizzle::B64, Swizzle::B32};
  for (std::uint64_t code = 0; code < 4; ++code) {
    for (std::uint64_t base = 0; base < 8; ++base) {
      const std::uint64_t d = (0x2A40ull >> 4) | ((0x80ull >> 4) << 16) | ((0x2000ull >> 4) << 32) |
                              (base << 49) | (code << 62);
      MatrixDescriptor m = decode_wgmma_descriptor(d);
      EXPECT_EQ(m.start, 0x2A40u);
      EXPECT_EQ(m.leading, 0x80u);
      EXPECT_EQ(m.stride, 0x2000u);
      EXPECT_EQ(m.base_offset, base);
      EXPECT_EQ(m.swizzle, by_code[code]);
    }
  }
}

TEST(EmuDescriptor, FieldWidthsAndReservedBits) {
  // All-ones 14-bit fields decode to the largest 18-bit byte values.
  const std::uint64_t full = 0x3FFFull | (0x3FFFull << 16) | (0x3FFFull << 32) | (7ull << 49) | (3ull << 62);
  MatrixDescriptor m = decode_wgmma_descriptor(full);
  EXPECT_EQ(m.start, 0x3FFF0u);
  EXPECT_EQ(m.leading, 0x3FFF0u);
  EXPECT_EQ(m.stride, 0x3FFF0u);
  EXPECT_EQ(m.base_offset, 7u);
  EXPECT_EQ(m.swizzle, Swizzle::B32);
  // Bits outside the fields (15-14, 31-30, 48-46, 61-52) do not leak into any field.
  const std::uint64_t reserved = (3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3FFull << 52);
  MatrixDescriptor r = decode_wgmma_descriptor(reserved);
  EXPECT_EQ(r.start, 0u);
  EXPECT_EQ(r.leading, 0u);
  EXPECT_EQ(r.stride, 0u);
  EXPECT_EQ(r.base_offset, 0u);
  EXPECT_EQ(r.swizzle, Swizzle::None);
  MatrixDescriptor both = decode_wgmma_descriptor(full | reserved);
  EXPECT_EQ(both.start, m.start);
  EXPECT_EQ(both.leading, m.leading);
  EXPECT_EQ(both.stride, m.stride);
  EXPECT_EQ(both.base_offset, m.base_offset);
  EXPECT_EQ(both.swizzle, m.swizzle);
}

// How JAX Mosaic GPU builds a descriptor (mma_utils.py encode_descriptor / encode_addr):
// (ptr & 0x3FFFF) >> 4 | encode(lbo) << 16 | encode(sbo) << 32 | enc(swizzle) << 62 with
// 128 -> 1, 64 -> 2, 32 -> 3, none -> 0, base offset left 0 ("We ignore the offset").
std::uint64_t mosaic_descriptor(std::uint64_t ptr, std::uint64_t lbo, std::uint64_t sbo, int swizzle_bytes_) {
  const std::uint64_t enc = swizzle_bytes_ == 128 ? 1 : swizzle_bytes_ == 64 ? 2 : swizzle_bytes_ == 32 ? 3 : 0;
  return ((ptr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16) | (((sbo & 0x3FFFF) >> 4) << 32) | (enc << 62);
}

TEST(EmuDescriptor, RoundTripWithMosaicAndCutlassConstruction) {
  const std::pair<int, Swizzle> modes[] = {
      {0, Swizzle::None}, {32, Swizzle::B32}, {64, Swizzle::B64}, {128, Swizzle::B128}};
  for (auto [bytes, s] : modes) {
    for (std::uint64_t ptr : {0x0ull, 0x400ull, 0x1F800ull, 0x3FFF0ull}) {
      for (auto [lbo, sbo] : {std::pair<std::uint64_t, std::uint64_t>{16, 1024}, {8192, 1024}, {128, 256}}) {
        MatrixDescriptor m = decode_wgmma_descriptor(mosaic_descriptor(ptr, lbo, sbo, bytes));
        EXPECT_EQ(m.start, ptr);
        EXPECT_EQ(m.leading, lbo);
        EXPECT_EQ(m.stride, sbo);
        EXPECT_EQ(m.swizzle, s);
        EXPECT_EQ(m.base_offset, 0u);
      }
    }
  }
  // Mosaic's ptr & 0x3FFFF: a generic-looking address above the 256 KiB window wraps.
  EXPECT_EQ(decode_wgmma_descriptor(mosaic_descriptor(0x40400, 16, 1024, 128)).start, 0x400u);
  // CUTLASS DescriptorIterator / GmmaDescriptor::operator+ adds the offset (in 16-byte units) to
  // the low 32-bit word, i.e. the start field; wgmma.py adds a_k_stride >> 4 the same way. A
  // k-step of 16 bf16 in a K-major 128B-swizzled tile is 32 bytes = +2.
  const std::uint64_t d0 = mosaic_descriptor(0x1000, 16, 1024, 128);
  for (std::uint64_t k = 0; k < 4; ++k) {
    MatrixDescriptor m = decode_wgmma_descriptor(d0 + 2 * k);
    EXPECT_EQ(m.start, 0x1000u + 32 * k);
    EXPECT_EQ(m.stride, 1024u);
    EXPECT_EQ(m.swizzle, Swizzle::B128);
  }
}

// ---------------------------------------------------------------------------------------------
// Operand addresses (PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout"; CuTe canonical
// layouts in mma_traits_sm90_gmma.hpp make_gmma_desc comments; Mosaic mma_utils.py
// create_descriptor)
// ---------------------------------------------------------------------------------------------

MatrixDescriptor desc(std::uint32_t start, std::uint32_t lbo, std::uint32_t sbo, Swizzle s) {
  MatrixDescriptor d;
  d.start = start;
  d.leading = lbo;
  d.stride = sbo;
  d.swizzle = s;
  return d;
}

int swz_bits(Swizzle s) { return s == Swizzle::B32 ? 1 : s == Swizzle::B64 ? 2 : s == Swizzle::B128 ? 3 : 0; }

// K-major, swizzled, as TMA writes it: a box of `rows` x (S / elem) elements (S = swizzle span),
// rows S bytes apart, the whole box swizzled on the absolute shared address. CuTe K-major
// canonical layout ((8,m),(T,2)):((S/16*T, SBO),(1,T)) -> rows of one 8-row atom S bytes apart,
// atoms SBO = 8*S apart, LBO unused ("Unused for all SWIZZLE_* layouts", mma_sm90_desc.hpp;
// Mosaic: leading_byte_offset = IGNORED, stride_byte_offset = 8 * swizzle). The descriptor start
// advances by 32 bytes per k-step of the instruction (Mosaic desc_k_strides = (MMA_BYTEWIDTH_K,),
// CUTLASS DescriptorIterator).
void check_k_major_swizzled(Swizzle s, int elem_bytes) {
  const std::uint32_t S = static_cast<std::uint32_t>(swizzle_bytes(s));
  const std::uint32_t base = 0x6000;  // 1024-aligned, as the swizzle atom requires
  const int rows = 64;
  const int k_per_row = static_cast<int>(S) / elem_bytes;
  const int k_per_step = 32 / elem_bytes;  // k16 for 16-bit types, k8 for tf32
  auto tma = [&](int m, int k) {
    return cute_swizzle(base + static_cast<std::uint32_t>(m) * S + static_cast<std::uint32_t>(k * elem_bytes),
                        swz_bits(s));
  };
  for (int step = 0; step < k_per_row / k_per_step; ++step) {
    // LBO deliberately nonsense: it must be ignored for swizzled K-major layouts.
    MatrixDescriptor d = desc(base + 32 * step, 0x3FFF0, 8 * S, s);
    for (int m = 0; m < rows; ++m)
      for (int kk = 0; kk < k_per_step; ++kk)
        ASSERT_EQ(wgmma_operand_address(d, false, elem_bytes, m, kk), tma(m, step * k_per_step + kk))
            << "swizzle " << S << " elem " << elem_bytes << " step " << step << " m " << m << " k " << kk;
  }
}

TEST(EmuOperandAddress, KMajorSwizzledBf16AsTmaWritesIt) {
  check_k_major_swizzled(Swizzle::B128, 2);  // 64x64 bf16 tile, 4 k-steps of 16
  check_k_major_swizzled(Swizzle::B64, 2);   // 64x32, 2 k-steps
  check_k_major_swizzled(Swizzle::B32, 2);   // 64x16, 1 k-step
}

TEST(EmuOperandAddress, KMajorSwizzledTf32AsTmaWritesIt) {
  check_k_major_swizzled(Swizzle::B128, 4);  // 64x32 tf32, 4 k-steps of 8
  check_k_major_swizzled(Swizzle::B64, 4);
  check_k_major_swizzled(Swizzle::B32, 4);
}

// The concrete element the brief names: 128B-swizzled K-major bf16, element (m=9, k=21): row 9
// is line 1 of atom 1 (1024 + 128); k=21 is byte 42 = chunk 2 byte 10 of the line; line 1
// swaps chunk 2 with chunk 3 (ISA table row 1: 1 0 3 2 ...): 0x6000 + 1152 + 48 + 10. Via the
// descriptor of k-step 1 (start + 32), k index 5 within the step.
TEST(EmuOperandAddress, KMajorSwizzledWorkedExample) {
  MatrixDescriptor d = desc(0x6000 + 32, 16, 1024, Swizzle::B128);
  EXPECT_EQ(wgmma_operand_address(d, false, 2, 9, 5), 0x6000u + 1152 + 48 + 10);
}

// K-major, no swizzle ("interleave"): CuTe ((8,m),(T,2)):((1T,SBO),(1,LBO)) in elements, i.e.
// core matrices of 8 rows x 16 bytes, rows 16 bytes apart, core matrices along K LBO apart and
// along M/N SBO apart (PTX ISA 9.7.16.3.1 table, same for wgmma: "K-Major No-Swizzling: the
// stride from the first column to the second column of the 8x2 tile").
TEST(EmuOperandAddress, KMajorInterleaveBf16AndTf32) {
  for (int elem : {2, 4}) {
    const int T = 16 / elem;
    for (auto [lbo, sbo] : {std::pair<std::uint32_t, std::uint32_t>{128, 256}, {1024, 128}}) {
      MatrixDescriptor d = desc(0x800, lbo, sbo, Swizzle::None);
      std::set<std::uint32_t> bytes;
      for (int m = 0; m < 64; ++m)
        for (int k = 0; k < 2 * T; ++k) {
          const std::uint32_t want = 0x800 + (m % 8) * 16 + (m / 8) * sbo + (k % T) * elem + (k / T) * lbo;
          ASSERT_EQ(wgmma_operand_address(d, false, elem, m, k), want) << elem << " " << m << " " << k;
          for (int b = 0; b < elem; ++b) bytes.insert(want + b);
        }
      // Both arrangements pack the 64 x 32-byte tile densely: 2048 distinct bytes.
      EXPECT_EQ(bytes.size(), 2048u);
      EXPECT_EQ(*bytes.begin(), 0x800u);
      EXPECT_EQ(*bytes.rbegin(), 0x800u + 2047);
    }
  }
}

// MN-major, swizzled, as TMA writes an N-contiguous B tile (global K x N row-major): boxes of
// (S/2 N) x 64 K, one S-byte row per k, boxes for successive N ranges 64*S bytes
// apart. CuTe MN-major canonical ((T,S/16,m),(8,k)):((1,T,LBO),(S/16*T,SBO)): MN contiguous within
// an S-byte row, K rows S bytes apart, LBO between MN atoms, SBO between groups of 8 K rows
// (make_gmma_desc<Major::MN>: stride_byte_offset_ = stride_11, leading_byte_offset_ = stride_01
// for swizzled types). Mosaic agrees: MN-fastest small tiles set leading_byte_offset =
// mn_tile_stride, stride_byte_offset = k_tile_stride, and step the descriptor by
// k_tile_stride * (k16 / 8) per instruction. PTX ISA tcgen05 table (same wgmma layouts):
// "MN-Major ... Swizzled layouts: [LBO is the] stride from the first (swizzle-byte-size/16) rows
// to the next".
void check_mn_major_swizzled(Swizzle s) {
  const std::uint32_t S = static_cast<std::uint32_t>(swizzle_bytes(s));
  const int n_per_row = static_cast<int>(S) / 2;
  const std::uint32_t base = 0x8000;
  const int K = 64, N = 128;
  const std::uint32_t box_bytes = K * S;  // one TMA box: n_per_row x K
  auto tma = [&](int n, int k) {
    return cute_swizzle(base + (n / n_per_row) * box_bytes + k * S + (n % n_per_row) * 2, swz_bits(s));
  };
  for (int step = 0; step < K / 16; ++step) {
    MatrixDescriptor d = desc(base + step * 2 * 8 * S, box_bytes, 8 * S, s);
    for (int n = 0; n < N; ++n)
      for (int kk = 0; kk < 16; ++kk)
        ASSERT_EQ(wgmma_operand_address(d, true, 2, n, kk), tma(n, step * 16 + kk))
            << "swizzle " << S << " step " << step << " n " << n << " k " << kk;
  }
}

TEST(EmuOperandAddress, MnMajorSwizzledBf16AsTmaWritesIt) {
  check_mn_major_swizzled(Swizzle::B128);
  check_mn_major_swizzled(Swizzle::B64);
  check_mn_major_swizzled(Swizzle::B32);
}

// MN-major, no swizzle: CuTe ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)): T MN-elements contiguous,
// 8 K rows 16 bytes apart (one 128-byte core matrix), core matrices along MN SBO apart and along
// K LBO apart (note the swap relative to the swizzled MN-major case; ISA tcgen05 table:
// "MN-Major Interleave: [LBO is the] stride from the first 8 columns to the next 8 columns", the
// columns being K).
TEST(EmuOperandAddress, MnMajorInterleaveBf16) {
  const int N = 64, K = 16;
  const std::uint32_t sbo = 128, lbo = (N / 8) * 128;
  MatrixDescriptor d = desc(0x400, lbo, sbo, Swizzle::None);
  std::set<std::uint32_t> bytes;
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      const std::uint32_t want = 0x400 + (n % 8) * 2 + (n / 8) * sbo + (k % 8) * 16 + (k / 8) * lbo;
      ASSERT_EQ(wgmma_operand_address(d, true, 2, n, k), want) << n << " " << k;
      bytes.insert(want);
      bytes.insert(want + 1);
    }
  EXPECT_EQ(bytes.size(), static_cast<std::size_t>(N * K * 2));
  EXPECT_EQ(*bytes.rbegin(), 0x400u + N * K * 2 - 1);
}

// ---------------------------------------------------------------------------------------------
// Register fragments (PTX ISA 9.7.15.5.1.1.1 "Matrix Fragments for wgmma.mma_async.m64nNk16",
// figures "WGMMA .m64nNk16 register fragment layout for accumulator matrix D" and "... for
// matrix A"; CuTe CLayout_64xN / ALayout_64x16 in mma_traits_sm90_gmma.hpp; Mosaic GPU
// fragmented_array.py WGMMA_LAYOUT: 64x8 tiles split over 4 warps into 16x8, then 8x8
// submatrices where lane l holds row l/4, columns 2*(l%4) and 2*(l%4)+1)
// ---------------------------------------------------------------------------------------------

// CuTe TV layout Shape<<4,8,4>,<2,2,N/8>>, Stride<<128,1,16>,<64,8,512>> -> column-major index
// into the 64 x N tile (row = idx % 64, col = idx / 64).
std::pair<int, int> cute_c_layout(int thread, int value) {
  const int t0 = thread % 4, t1 = (thread / 4) % 8, t2 = thread / 32;
  const int v0 = value % 2, v1 = (value / 2) % 2, v2 = value / 4;
  const int idx = t0 * 128 + t1 * 1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512;
  return {idx % 64, idx / 64};
}

TEST(EmuFragment, AccumulatorCoversTileExactlyOnce) {
  for (int N : {8, 16, 24, 64, 128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int r = 0; r < N / 2; ++r) {
        auto [row, col] = wgmma_accumulator_coord(t, r);
        ASSERT_GE(row, 0);
        ASSERT_LT(row, 64);
        ASSERT_GE(col, 0);
        ASSERT_LT(col, N) << "N " << N << " t " << t << " r " << r;
        EXPECT_TRUE(seen.insert({row, col}).second) << "duplicate (" << row << "," << col << ") N " << N;
      }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(64 * N));
  }
}

TEST(EmuFragment, AccumulatorSpotValuesFromIsaFigure) {
  // Thread 0 (warp 0, lane 0): d0,d1 at row 0 cols 0,1; d2,d3 at row 8; d4,d5 at cols 8,9.
  EXPECT_EQ(wgmma_accumulator_coord(0, 0), std::make_pair(0, 0));
  EXPECT_EQ(wgmma_accumulator_coord(0, 1), std::make_pair(0, 1));
  EXPECT_EQ(wgmma_accumulator_coord(0, 2), std::make_pair(8, 0));
  EXPECT_EQ(wgmma_accumulator_coord(0, 3), std::make_pair(8, 1));
  EXPECT_EQ(wgmma_accumulator_coord(0, 4), std::make_pair(0, 8));
  EXPECT_EQ(wgmma_accumulator_coord(0, 5), std::make_pair(0, 9));
  // Thread 5: groupID 1 (row 1), threadID_in_group 1 (cols 2,3).
  EXPECT_EQ(wgmma_accumulator_coord(5, 0), std::make_pair(1, 2));
  EXPECT_EQ(wgmma_accumulator_coord(5, 1), std::make_pair(1, 3));
  EXPECT_EQ(wgmma_accumulator_coord(5, 2), std::make_pair(9, 2));
  EXPECT_EQ(wgmma_accumulator_coord(5, 3), std::make_pair(9, 3));
  // Thread 32 starts warp 1's 16 rows.
  EXPECT_EQ(wgmma_accumulator_coord(32, 0), std::make_pair(16, 0));
  // Thread 127 (warp 3, lane 31: row 48+7, cols 6,7); its last register of n256 (d127) is
  // row 63, col 255.
  EXPECT_EQ(wgmma_accumulator_coord(127, 0), std::make_pair(55, 6));
  EXPECT_EQ(wgmma_accumulator_coord(127, 127), std::make_pair(63, 255));
  // And its last register of n8 (d3).
  EXPECT_EQ(wgmma_accumulator_coord(127, 3), std::make_pair(63, 7));
}

TEST(EmuFragment, AccumulatorMatchesCuteCLayout) {
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 128; ++r) EXPECT_EQ(wgmma_accumulator_coord(t, r), cute_c_layout(t, r)) << t << " " << r;
}

TEST(EmuFragment, AFragmentCoversTileAndMatchesIsaAndCute) {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 128; ++t)
    for (int j = 0; j < 8; ++j) {
      auto rc = wgmma_a_fragment_coord(t, j);
      EXPECT_EQ(rc, cute_c_layout(t, j)) << "ALayout_64x16 " << t << " " << j;
      EXPECT_LT(rc.first, 64);
      EXPECT_LT(rc.second, 16);
      EXPECT_TRUE(seen.insert(rc).second);
    }
  EXPECT_EQ(seen.size(), 64u * 16u);
  // ISA figure for A: a0,a1 (groupID, 2*tig + {0,1}); a2,a3 row + 8; a4..a7 cols + 8.
  const std::pair<int, int> t0[8] = {{0, 0}, {0, 1}, {8, 0}, {8, 1}, {0, 8}, {0, 9}, {8, 8}, {8, 9}};
  for (int j = 0; j < 8; ++j) EXPECT_EQ(wgmma_a_fragment_coord(0, j), t0[j]);
  EXPECT_EQ(wgmma_a_fragment_coord(5, 0), std::make_pair(1, 2));
  EXPECT_EQ(wgmma_a_fragment_coord(127, 7), std::make_pair(63, 15));
}

}  // namespace
}  // namespace mgpu::emu
