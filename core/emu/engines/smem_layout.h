// Where the async proxy puts and finds matrix elements in shared memory.
//  - Swizzle (PTX ISA 5.5.5 "Tensor copy swizzling modes"; CUDA Programming Guide, TMA
//    swizzle): the 16-byte chunk index, address bits [4, 4+b), is XORed with address bits
//    [7, 7+b), b = 1/2/3 for 32B/64B/128B. The pattern is a function of the absolute shared
//    address, so TMA and wgmma agree whenever they agree on the address.
//  - wgmma matrix descriptors (PTX ISA 9.7.15.5.1 "Matrix Descriptor Format"): start address,
//    leading- and stride-dimension byte offsets (all >> 4), base offset, swizzle mode.
//  - Operand element addresses for the canonical K-major and MN-major layouts (PTX ISA
//    9.7.15.5.1 "Shared Memory Matrix Layout"), in 16-byte core matrices of 8 rows.
//  - The accumulator fragment of wgmma .m64nNk16 with f32 D (PTX ISA 9.7.15.5.2 "Matrix
//    Fragments for wgmma.mma_async.m64nNk16"), and the A-in-registers fragment.
#pragma once

#include <cstdint>
#include <utility>

namespace mgpu::emu {

enum class Swizzle : std::uint8_t { None = 0, B32 = 1, B64 = 2, B128 = 3 };

// The shared address where the byte at logical (unswizzled) shared address `a` lives.
std::uint32_t swizzle_address(std::uint32_t a, Swizzle s);
int swizzle_bytes(Swizzle s);  // 0, 32, 64, 128

struct MatrixDescriptor {
  std::uint32_t start = 0;        // bytes
  std::uint32_t leading = 0;      // leading dimension byte offset (LBO), bytes
  std::uint32_t stride = 0;       // stride dimension byte offset (SBO), bytes
  std::uint32_t base_offset = 0;  // 3 bits
  Swizzle swizzle = Swizzle::None;
};

// Bits 0-13 start>>4, 16-29 LBO>>4, 32-45 SBO>>4, 49-51 base offset, 62-63 layout type
// (0 interleave/none, 1 128B, 2 64B, 3 32B).
MatrixDescriptor decode_wgmma_descriptor(std::uint64_t d);

// Shared address of element (mn, k) of a wgmma operand (A: mn = row of M; B: mn = column of N)
// whose descriptor is `d`, `elem_bytes` wide, K-major unless `mn_major`.
std::uint32_t wgmma_operand_address(const MatrixDescriptor& d, bool mn_major, int elem_bytes, int mn, int k);

// Accumulator D of m64nNk16 (f32): thread t of the warpgroup (0..127), register i (0..N/2-1)
// holds D[row][col].
std::pair<int, int> wgmma_accumulator_coord(int thread, int reg);
// A in registers (16-bit types): thread t, element j (0..7; register j/2, half j%2).
std::pair<int, int> wgmma_a_fragment_coord(int thread, int element);

}  // namespace mgpu::emu
