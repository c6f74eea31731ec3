// Memory order of an access (PTX ISA 8.4 "Operation types", 8.5 "Scope"): weak or strong, with
// the acquire/release semantics and the scope its .sem/.scope qualifiers (or their defaults)
// give. Contract: parse_order() reads an ld/st/atom/red instruction's qualifiers once, at
// decode; the race detectors compare accesses through the packed `bits()` of one access and one
// byte of it (whether they are morally strong, PTX ISA 8.7).
#pragma once

#include <cstdint>
#include <string>

#include "core/emu/ptx/module.h"

namespace mgpu::emu {

// PTX ISA 8.5, Table "Scopes": the threads a strong operation interacts with directly.
enum class Scope : std::uint8_t { Cta = 0, Cluster = 1, Gpu = 2, Sys = 3 };
const char* scope_name(Scope s);

struct MemOrder {
  bool strong = false;   // .relaxed, .acquire, .release, .acq_rel, .volatile, .mmio, or atomic
  bool acquire = false;  // .acquire, .acq_rel
  bool release = false;  // .release, .acq_rel
  Scope scope = Scope::Gpu;

  std::int32_t encode() const { return (strong ? 1 : 0) | (acquire ? 2 : 0) | (release ? 4 : 0) | (static_cast<int>(scope) << 3); }
  static MemOrder decode(std::int32_t v) {
    return MemOrder{(v & 1) != 0, (v & 2) != 0, (v & 4) != 0, static_cast<Scope>((v >> 3) & 3)};
  }
};

// The memory order of ld / ldu / st (`atomic` false) or atom / red (`atomic` true); "" or why the
// form is not one the ISA defines:
//   ld/st: .weak or nothing (weak); .relaxed.scope, .acquire.scope (ld), .release.scope (st);
//     .volatile and .mmio (.mmio.relaxed.sys) are relaxed at .sys scope (8.4.1, 8.4.2);
//     .nc (ld.global.nc) is outside the model (8.1) and reads as weak (a read of bytes written
//     in the launch is reported besides: exec/memory_access.cc, non-coherent-read).
//   atom/red: .sem defaults to .relaxed, .scope to .gpu ("atom", "red": "If the .sem qualifier is
//     absent, .relaxed is assumed by default", "If the .scope qualifier is absent, .gpu scope is
//     assumed"); red takes .relaxed or .release only.
std::string parse_order(const ptx::Instruction& p, bool atomic, MemOrder& out);

// One byte of an access as the race detectors keep it (16 bits): strong, scope, the byte's index
// in its element and the element's size (for "overlap completely"), and whether the async proxy
// made it (TMA; never strong).
namespace order_bits {
inline constexpr std::uint16_t kStrong = 1, kAsync = 1u << 14;
inline std::uint16_t make(bool strong, Scope s, std::uint32_t index, std::uint32_t size) {
  if (!strong) return 0;
  return static_cast<std::uint16_t>(kStrong | (static_cast<unsigned>(s) << 1) | ((index & 31u) << 3) | ((size & 63u) << 8));
}
inline bool strong(std::uint16_t b) { return b & kStrong; }
inline Scope scope(std::uint16_t b) { return static_cast<Scope>((b >> 1) & 3); }
inline std::uint32_t index(std::uint16_t b) { return (b >> 3) & 31u; }
inline std::uint32_t size(std::uint16_t b) { return (b >> 8) & 63u; }
// The access shape of `b` at byte `i` of an access of `n` bytes is the same access location:
// complete overlap (PTX ISA 8.2.1: both locations identical).
inline bool same_location(std::uint16_t a, std::uint16_t b) { return index(a) == index(b) && size(a) == size(b); }
// The bits of byte i of an access whose bits (index 0) are `b`: its index within its element
// (PTX ISA 8.2.4 models a vector access as one access per element).
inline std::uint16_t at(std::uint16_t b, std::uint32_t i) {
  if (!strong(b)) return b & kAsync;
  const std::uint32_t n = size(b);
  return static_cast<std::uint16_t>((b & ~(31u << 3)) | (((n ? i % n : 0) & 31u) << 3));
}
}  // namespace order_bits

}  // namespace mgpu::emu
