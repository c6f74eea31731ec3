// The virtual device's address map (PTX ISA 5.1.1 "Generic addressing"). Generic addresses
// are 64-bit; windows for shared, param and local memory sit far from device allocations so a
// stray pointer faults instead of aliasing. A 32-bit shared address names its CTA's rank in
// bits 24 and up, the executing CTA's own addresses included (what `mov r, smem_var` and cvta
// give), so a shared::cta address is also a valid shared::cluster address of the executing CTA,
// as the ISA requires, and `mapa` changes only those bits. This is the hardware's layout, which
// kernels rely on: CUTLASS's 2-SM code and our sm_100a template reach the even CTA of a pair by
// clearing bit 24 (CUTLASS's Sm100MmaPeerBitMask = 0xFEFFFFFF) of a shared::cta address.
#pragma once

#include <cstdint>

namespace mgpu::emu {

inline constexpr std::uint64_t kGlobalBase = 0x0000'0100'0000'0000ull;   // device allocations
inline constexpr std::uint64_t kSharedWindow = 0x0000'7000'0000'0000ull; // generic -> shared::cluster
inline constexpr std::uint64_t kParamWindow = 0x0000'7100'0000'0000ull;  // generic -> kernel params
inline constexpr std::uint64_t kLocalWindow = 0x0000'7200'0000'0000ull;  // generic -> local (per thread)
inline constexpr std::uint64_t kWindowSize = 0x0000'0001'0000'0000ull;

inline constexpr std::uint32_t kClusterRankShift = 24;
inline constexpr std::uint32_t kSharedOffsetMask = (1u << kClusterRankShift) - 1;

// shared::cluster address -> (CTA rank, offset)
inline int cluster_rank_of(std::uint32_t a) { return static_cast<int>(a >> kClusterRankShift); }
inline std::uint32_t cluster_address(int rank, std::uint32_t offset) {
  return (static_cast<std::uint32_t>(rank) << kClusterRankShift) | offset;
}

}  // namespace mgpu::emu
