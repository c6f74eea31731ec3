// The virtual device's address map (PTX ISA 5.1.1 "Generic addressing"). Generic addresses
// are 64-bit; windows for shared, param and local memory sit far from device allocations so a
// stray pointer faults instead of aliasing. A 32-bit shared::cluster address names its CTA in
// the high byte (rank + 1; 0 means the executing CTA) -- what `mapa` returns -- so a
// shared::cta address is also a valid shared::cluster address of the executing CTA, as the ISA
// requires.
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

// shared::cluster address -> (CTA rank or -1 for the executing CTA, offset)
inline int cluster_rank_of(std::uint32_t a) { return static_cast<int>(a >> kClusterRankShift) - 1; }
inline std::uint32_t cluster_address(int rank, std::uint32_t offset) {
  return (static_cast<std::uint32_t>(rank + 1) << kClusterRankShift) | offset;
}

}  // namespace mgpu::emu
