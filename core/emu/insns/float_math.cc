// Floating-point functions (PTX ISA 9.7.3: rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh; 9.7.4.10
// "Half Precision Floating Point Instructions: ex2"). The .approx forms are computed exactly
// (correctly rounded, up to a double rounding through binary64): the ISA bounds their error
// (ex2.approx.f32: "The maximum ulp error is 2 ulp from correctly rounded result across the
// full range of inputs"; ex2.approx.f16: relative error 2^-9.9, .bf16: 2^-7), it does not fix
// their bits, and a kernel whose correctness depends on the approximation's bits is wrong anyway.
//
// .ftz on .f32 (9.7.3, each function's "Subnormal numbers": "sm_20+ ... `<op>.ftz.f32` flushes
// subnormal inputs and results to sign-preserving zero"): the input is flushed before the
// function, the f32 result after rounding. (Before this was honoured, ex2.approx.ftz.f32 of
// -130 gave the subnormal 2^-130 instead of +0.)
#include <cmath>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Fn : std::uint8_t { Rcp, Sqrt, Rsqrt, Ex2, Lg2, Sin, Cos, Tanh };
enum Flag : std::uint32_t { Ftz = 1 };

const char* const kNames[] = {"rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"};

template <Fn kFn>
Flow unary(Warp& w, const Insn& in, std::uint32_t mask) {
  const bool ftz = (in.flags & Ftz) && in.type == Ty::F32;
  EMU_FOR_LANES(mask, l) {
    double a = read_float(src(w, in, 1, l), in.type);
    if (ftz && std::fpclassify(static_cast<float>(a)) == FP_SUBNORMAL) a = std::copysign(0.0, a);
    double r = 0;
    if constexpr (kFn == Rcp) r = 1.0 / a;
    else if constexpr (kFn == Sqrt) r = std::sqrt(a);
    else if constexpr (kFn == Rsqrt) r = 1.0 / std::sqrt(a);
    else if constexpr (kFn == Ex2) r = std::exp2(a);
    else if constexpr (kFn == Lg2) r = std::log2(a);
    else if constexpr (kFn == Sin) r = std::sin(a);
    else if constexpr (kFn == Cos) r = std::cos(a);
    else if constexpr (kFn == Tanh) r = std::tanh(a);
    if (in.type == Ty::F32) {
      float f = static_cast<float>(r);
      if (ftz && std::fpclassify(f) == FP_SUBNORMAL) f = std::copysign(0.0f, f);
      r = f;
    }
    dst(w, in, 0, l, write_float(r, in.type));
  }
  return Flow::Next;
}

// ex2.approx.f16 / .f16x2 and ex2.approx.ftz.bf16 / .bf16x2 (PTX ISA 9.7.4.10): for the packed
// types "fA[0] = a[0:15]; fA[1] = a[16:31]; d[0] = 2 ^ fA[0]; d[1] = 2 ^ fA[1]" (d[0] the low
// half). "For the .f16 type, subnormal inputs are supported. ex2.approx.ftz.bf16 flushes
// subnormal inputs and results to sign-preserving zero."
bool half_subnormal(std::uint64_t h, Ty half) {
  return half == Ty::BF16 ? ((h & 0x7F80) == 0 && (h & 0x7F) != 0) : ((h & 0x7C00) == 0 && (h & 0x3FF) != 0);
}

Flow ex2_half(Warp& w, const Insn& in, std::uint32_t mask) {
  const bool packed = in.type == Ty::F16x2 || in.type == Ty::BF16x2;
  const Ty half = (in.type == Ty::BF16 || in.type == Ty::BF16x2) ? Ty::BF16 : Ty::F16;
  const bool ftz = half == Ty::BF16;
  EMU_FOR_LANES(mask, l) {
    const std::uint64_t a = src(w, in, 1, l);
    std::uint64_t d = 0;
    for (int i = 0; i < (packed ? 2 : 1); ++i) {
      const std::uint64_t h = (a >> (16 * i)) & 0xFFFF;
      double x = read_float(h, half);
      if (ftz && half_subnormal(h, half)) x = std::copysign(0.0, x);
      std::uint64_t r = write_float(std::exp2(x), half) & 0xFFFF;
      if (ftz && half_subnormal(r, half)) r &= 0x8000;
      d |= r << (16 * i);
    }
    dst(w, in, 0, l, d);
  }
  return Flow::Next;
}

template <Fn kFn>
std::string decode_unary(const ptx::Instruction& p, Insn& out) {
  const std::string name = kNames[kFn];
  out.type = last_type(p);
  if (has_part(p, "ftz")) out.flags |= Ftz;
  const bool half = out.type == Ty::F16 || out.type == Ty::F16x2 || out.type == Ty::BF16 || out.type == Ty::BF16x2;
  if (half && kFn == Ex2) {
    // PTX ISA 9.7.4.10: "ex2.approx.atype d, a; ex2.approx.ftz.btype d, a; .atype = { .f16, .f16x2}
    // .btype = { .bf16, .bf16x2}" -- .ftz is required on the bf16 forms and absent on the f16 ones.
    const bool bf = out.type == Ty::BF16 || out.type == Ty::BF16x2;
    if (!has_part(p, "approx")) return "ex2 on half types exists only as ex2.approx (PTX ISA 9.7.4.10)";
    if (bf && !(out.flags & Ftz)) return "ex2.approx.bf16/.bf16x2 without .ftz is not a PTX form (PTX ISA 9.7.4.10: ex2.approx.ftz.bf16{x2})";
    if (!bf && (out.flags & Ftz)) return "ex2.approx.ftz.f16/.f16x2 is not a PTX form (PTX ISA 9.7.4.10: ex2.approx.f16{x2} has no .ftz)";
    out.fn = &ex2_half;
    return "";
  }
  if (half) return name + " on .f16/.f16x2/.bf16/.bf16x2 is not implemented";
  // ex2, lg2, sin, cos and tanh exist for .f32 only (PTX ISA 9.7.3: "ex2.approx{.ftz}.f32",
  // "lg2.approx{.ftz}.f32", "sin.approx{.ftz}.f32", "cos.approx{.ftz}.f32", "tanh.approx.f32").
  if (out.type == Ty::F64 && kFn != Rcp && kFn != Sqrt && kFn != Rsqrt) return name + ".f64 is not a PTX form (.f32 only)";
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
