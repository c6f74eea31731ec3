#include "core/emu/engines/smem_layout.h"

namespace mgpu::emu {

int swizzle_bytes(Swizzle s) {
  switch (s) {
    case Swizzle::None: return 0;
    case Swizzle::B32: return 32;
    case Swizzle::B64: return 64;
    case Swizzle::B128: return 128;
  }
  return 0;
}

std::uint32_t swizzle_address(std::uint32_t a, Swizzle s) {
  // b bits of 16-byte chunk index XOR the b bits above the 128-byte row (CuTe Swizzle<b,4,3>).
  int b = static_cast<int>(s);
  if (b == 0) return a;
  std::uint32_t mask = ((1u << b) - 1) << 4;
  return a ^ ((a >> 3) & mask);
}

MatrixDescriptor decode_wgmma_descriptor(std::uint64_t d) {
  MatrixDescriptor m;
  m.start = static_cast<std::uint32_t>(d & 0x3FFF) << 4;
  m.leading = static_cast<std::uint32_t>((d >> 16) & 0x3FFF) << 4;
  m.stride = static_cast<std::uint32_t>((d >> 32) & 0x3FFF) << 4;
  m.base_offset = static_cast<std::uint32_t>((d >> 49) & 0x7);
  switch ((d >> 62) & 0x3) {
    case 0: m.swizzle = Swizzle::None; break;
    case 1: m.swizzle = Swizzle::B128; break;
    case 2: m.swizzle = Swizzle::B64; break;
    case 3: m.swizzle = Swizzle::B32; break;
  }
  return m;
}

std::uint32_t wgmma_operand_address(const MatrixDescriptor& d, bool mn_major, int elem_bytes, int mn, int k) {
  const std::uint32_t t = 16 / elem_bytes;  // elements per 16-byte core-matrix row
  std::uint32_t off;
  if (d.swizzle == Swizzle::None) {
    // Core matrices of 8 rows x 16 bytes, rows 16 bytes apart. K-major: core matrices along
    // K are LBO apart, along M/N SBO apart. MN-major: a core-matrix row holds t MN elements;
    // core matrices along MN are SBO apart, along K LBO apart.
    if (!mn_major) {
      off = (mn % 8) * 16 + (mn / 8) * d.stride + (k % t) * elem_bytes + (k / t) * d.leading;
    } else {
      off = (mn % t) * elem_bytes + (mn / t) * d.stride + (k % 8) * 16 + (k / 8) * d.leading;
    }
  } else {
    const std::uint32_t row = static_cast<std::uint32_t>(swizzle_bytes(d.swizzle));  // bytes per swizzled row
    if (!mn_major) {
      // 8 rows of `row` bytes form one swizzle atom along M/N; atoms are SBO apart; K runs
      // contiguously within the row.
      off = (mn % 8) * row + (mn / 8) * d.stride + k * elem_bytes;
    } else {
      // MN runs contiguously within a row (row / elem_bytes elements), rows are K; atoms along
      // MN are LBO apart, groups of 8 K rows SBO apart.
      const std::uint32_t per_row = row / elem_bytes;
      off = (mn % per_row) * elem_bytes + (mn / per_row) * d.leading + (k % 8) * row + (k / 8) * d.stride;
    }
  }
  return swizzle_address(d.start + off, d.swizzle);
}

std::pair<int, int> wgmma_accumulator_coord(int thread, int reg) {
  int warp = thread / 32, lane = thread % 32;
  int row = 16 * warp + lane / 4 + 8 * ((reg >> 1) & 1);
  int col = 8 * (reg >> 2) + 2 * (lane % 4) + (reg & 1);
  return {row, col};
}

std::pair<int, int> wgmma_a_fragment_coord(int thread, int element) {
  int warp = thread / 32, lane = thread % 32;
  int row = 16 * warp + lane / 4 + 8 * ((element >> 1) & 1);
  int col = 8 * (element >> 2) + 2 * (lane % 4) + (element & 1);
  return {row, col};
}

}  // namespace mgpu::emu
