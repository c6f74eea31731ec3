// Host-side conversion between float and the 16-bit formats kernels read and write
// (round to nearest even; NaN stays NaN). For preparing inputs and checking outputs.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace mgpu::core {

inline std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return 0x7FC0;
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}

inline float from_bf16(std::uint16_t h) {
  std::uint32_t u = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float from_f16(std::uint16_t h) {
  std::uint32_t sign = std::uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000 | (man << 13));  // inf / NaN
  if (exp == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(float(man), -24);       // subnormal
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

inline std::uint16_t to_f16(float f) {
  if (std::isnan(f)) return 0x7E00;
  std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7C00;  // rounds to infinity
  if (a < std::ldexp(1.0f, -14)) return sign | static_cast<std::uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  int e;
  float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  std::uint32_t mant = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(m, 11)));  // 11 bits incl. leading 1
  if (mant == 2048) {
    mant = 1024;
    ++e;
  }
  return sign | static_cast<std::uint16_t>(((e + 14) << 10) | (mant & 0x3FF));
}

}  // namespace mgpu::core
