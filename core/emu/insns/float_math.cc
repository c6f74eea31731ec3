// Floating-point functions (PTX ISA 9.7.3: rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh). The
// .approx forms are computed exactly: the ISA bounds their error, it does not fix their bits,
// and a kernel whose correctness depends on the approximation's bits is wrong anyway.
#include <cmath>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Fn : std::uint8_t { Rcp, Sqrt, Rsqrt, Ex2, Lg2, Sin, Cos, Tanh };

template <Fn kFn>
Flow unary(Warp& w, const Insn& in, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) {
    double a = read_float(src(w, in, 1, l), in.type);
    double r = 0;
    if constexpr (kFn == Rcp) r = 1.0 / a;
    else if constexpr (kFn == Sqrt) r = std::sqrt(a);
    else if constexpr (kFn == Rsqrt) r = 1.0 / std::sqrt(a);
    else if constexpr (kFn == Ex2) r = std::exp2(a);
    else if constexpr (kFn == Lg2) r = std::log2(a);
    else if constexpr (kFn == Sin) r = std::sin(a);
    else if constexpr (kFn == Cos) r = std::cos(a);
    else if constexpr (kFn == Tanh) r = std::tanh(a);
    if (in.type == Ty::F32) r = static_cast<float>(r);
    dst(w, in, 0, l, write_float(r, in.type));
  }
  return Flow::Next;
}

template <Fn kFn>
std::string decode_unary(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  if (out.type != Ty::F32 && out.type != Ty::F64) return "only .f32 and .f64 are implemented";
  out.fn = &unary<kFn>;
  return "";
}

}  // namespace

void register_float() {
  register_decoder("rcp", &decode_unary<Rcp>);
  register_decoder("sqrt", &decode_unary<Sqrt>);
  register_decoder("rsqrt", &decode_unary<Rsqrt>);
  register_decoder("ex2", &decode_unary<Ex2>);
  register_decoder("lg2", &decode_unary<Lg2>);
  register_decoder("sin", &decode_unary<Sin>);
  register_decoder("cos", &decode_unary<Cos>);
  register_decoder("tanh", &decode_unary<Tanh>);
}

}  // namespace mgpu::emu
