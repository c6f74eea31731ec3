#include "core/emu/exec/scalar.h"

#include "core/half.h"

namespace mgpu::emu {

Ty parse_type(const std::string& p) {
  static const struct { const char* name; Ty ty; } table[] = {
      {"pred", Ty::Pred}, {"b8", Ty::B8}, {"b16", Ty::B16}, {"b32", Ty::B32}, {"b64", Ty::B64},
      {"u8", Ty::U8}, {"u16", Ty::U16}, {"u32", Ty::U32}, {"u64", Ty::U64}, {"s8", Ty::S8},
      {"s16", Ty::S16}, {"s32", Ty::S32}, {"s64", Ty::S64}, {"f16", Ty::F16}, {"bf16", Ty::BF16},
      {"f16x2", Ty::F16x2}, {"bf16x2", Ty::BF16x2}, {"f32", Ty::F32}, {"f64", Ty::F64}};
  for (const auto& e : table)
    if (p == e.name) return e.ty;
  return Ty::None;
}

int type_bits(Ty t) {
  switch (t) {
    case Ty::Pred: return 1;
    case Ty::B8: case Ty::U8: case Ty::S8: return 8;
    case Ty::B16: case Ty::U16: case Ty::S16: case Ty::F16: case Ty::BF16: return 16;
    case Ty::B32: case Ty::U32: case Ty::S32: case Ty::F32: case Ty::F16x2: case Ty::BF16x2: return 32;
    case Ty::B64: case Ty::U64: case Ty::S64: case Ty::F64: return 64;
    case Ty::None: return 64;
  }
  return 64;
}

float bf16_to_f32(std::uint16_t h) { return core::from_bf16(h); }
float f16_to_f32(std::uint16_t h) { return core::from_f16(h); }
std::uint16_t f32_to_bf16_rn(float f) { return core::to_bf16(f); }
std::uint16_t f32_to_f16_rn(float f) { return core::to_f16(f); }

double read_float(std::uint64_t bits, Ty t) {
  switch (t) {
    case Ty::F16: return f16_to_f32(static_cast<std::uint16_t>(bits));
    case Ty::BF16: return bf16_to_f32(static_cast<std::uint16_t>(bits));
    case Ty::F32: return as_f32(bits);
    case Ty::F64: return as_f64(bits);
    default: return 0;
  }
}

std::uint64_t write_float(double v, Ty t) {
  switch (t) {
    case Ty::F16: return f32_to_f16_rn(static_cast<float>(v));
    case Ty::BF16: return f32_to_bf16_rn(static_cast<float>(v));
    case Ty::F32: return f32_bits(static_cast<float>(v));
    case Ty::F64: return f64_bits(v);
    default: return 0;
  }
}

}  // namespace mgpu::emu
