// PTX fundamental types (PTX ISA 5.2, "Fundamental Types") and the bit-level conversions the
// instructions need. Values live in 64-bit register slots; a type says how many low bits count
// and how they are read. Half precision follows core/half.h's round-to-nearest-even.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace mgpu::emu {

enum class Ty : std::uint8_t { None, Pred, B8, B16, B32, B64, U8, U16, U32, U64, S8, S16, S32, S64, F16, BF16, F16x2, BF16x2, F32, F64 };

Ty parse_type(const std::string& part);  // "u32" -> Ty::U32, None if not a type
int type_bits(Ty t);
inline bool is_signed(Ty t) { return t == Ty::S8 || t == Ty::S16 || t == Ty::S32 || t == Ty::S64; }
inline bool is_float(Ty t) { return t == Ty::F16 || t == Ty::BF16 || t == Ty::F32 || t == Ty::F64 || t == Ty::F16x2 || t == Ty::BF16x2; }

inline std::uint64_t mask_bits(std::uint64_t v, int bits) { return bits >= 64 ? v : v & ((1ull << bits) - 1); }
inline std::int64_t sext(std::uint64_t v, int bits) {
  if (bits >= 64) return static_cast<std::int64_t>(v);
  std::uint64_t m = 1ull << (bits - 1);
  v = mask_bits(v, bits);
  return static_cast<std::int64_t>((v ^ m) - m);
}
inline float as_f32(std::uint64_t v) { float f; std::uint32_t u = static_cast<std::uint32_t>(v); std::memcpy(&f, &u, 4); return f; }
inline double as_f64(std::uint64_t v) { double d; std::memcpy(&d, &v, 8); return d; }
inline std::uint64_t f32_bits(float f) { std::uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline std::uint64_t f64_bits(double d) { std::uint64_t u; std::memcpy(&u, &d, 8); return u; }

float bf16_to_f32(std::uint16_t h);
float f16_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16_rn(float f);
std::uint16_t f32_to_f16_rn(float f);

// A register value read as a float of type t (f16/bf16 from the low 16 bits).
double read_float(std::uint64_t bits, Ty t);
std::uint64_t write_float(double v, Ty t);  // rounded to nearest even

}  // namespace mgpu::emu
