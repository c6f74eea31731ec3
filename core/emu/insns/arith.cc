// Integer and floating-point arithmetic (PTX ISA 9.7.1 "Integer Arithmetic Instructions",
// 9.7.3 "Floating-Point Instructions"). One decoder per opcode picks the integer or float
// handler by the instruction's type; values are computed in 64 bits and truncated to the
// type's width on write (the register keeps only the type's bits).
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Op : std::uint8_t { Add, Sub, Mul, MulHi, MulWide, Mad, MadHi, MadWide, Div, Rem, Min, Max, Neg, Abs, Fma };
enum Flag : std::uint32_t { Sat = 1, Ftz = 2, RoundZ = 4, RoundM = 8, RoundP = 16, NaNs = 32, Relu = 64 };

std::uint64_t ival(Warp& w, const Insn& in, std::size_t i, int lane, Ty t) { return mask_bits(src(w, in, i, lane), type_bits(t)); }

template <Op kOp>
Flow int_op(Warp& w, const Insn& in, std::uint32_t mask) {
  const Ty t = in.type;
  const int bits = type_bits(t);
  const bool sg = is_signed(t);
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = ival(w, in, 1, l, t);
    std::uint64_t r = 0;
    if constexpr (kOp == Neg) r = 0 - a;
    else if constexpr (kOp == Abs) r = sext(a, bits) < 0 ? 0 - a : a;
    else {
      std::uint64_t b = ival(w, in, 2, l, t);
      std::int64_t sa = sext(a, bits), sb = sext(b, bits);
      if constexpr (kOp == Add) {
        r = a + b;
        if ((in.flags & Sat) && sg) {
          __int128 s = static_cast<__int128>(sa) + sb;
          s = std::max<__int128>(std::min<__int128>(s, INT32_MAX), INT32_MIN);
          r = static_cast<std::uint64_t>(static_cast<std::int64_t>(s));
        }
      } else if constexpr (kOp == Sub) {
        r = a - b;
        if ((in.flags & Sat) && sg) {  // PTX ISA 9.7.1.2 sub: "sub{.sat}.s32", clamped like add.sat
          __int128 s = static_cast<__int128>(sa) - sb;
          s = std::max<__int128>(std::min<__int128>(s, INT32_MAX), INT32_MIN);
          r = static_cast<std::uint64_t>(static_cast<std::int64_t>(s));
        }
      }
      else if constexpr (kOp == Mul) r = a * b;
      else if constexpr (kOp == MulHi || kOp == MadHi) {
        if (bits == 64) {
          r = sg ? static_cast<std::uint64_t>((static_cast<__int128>(sa) * sb) >> 64)
                 : static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
        } else {
          r = sg ? static_cast<std::uint64_t>((sa * sb) >> bits) : (a * b) >> bits;
        }
        if constexpr (kOp == MadHi) r += ival(w, in, 3, l, t);
      } else if constexpr (kOp == MulWide || kOp == MadWide) {
        r = sg ? static_cast<std::uint64_t>(sa * sb) : a * b;
        if constexpr (kOp == MadWide) r += src(w, in, 3, l);
        write_operand(w, in, in.operand(0), l, mask_bits(r, 2 * bits), in.type);
        continue;
      } else if constexpr (kOp == Mad) r = a * b + ival(w, in, 3, l, t);
      else if constexpr (kOp == Div || kOp == Rem) {
        if (b == 0) r = kOp == Div ? mask_bits(~0ull, bits) : a;  // PTX: undefined; a GPU gives all ones
        else if (sg && sb == -1) r = kOp == Div ? 0 - a : 0;  // MIN / -1 overflows: wrap, don't trap the host
        else if (sg) r = static_cast<std::uint64_t>(kOp == Div ? sa / sb : sa % sb);
        else r = kOp == Div ? a / b : a % b;
      } else if constexpr (kOp == Min) r = sg ? static_cast<std::uint64_t>(std::min(sa, sb)) : std::min(a, b);
      else if constexpr (kOp == Max) r = sg ? static_cast<std::uint64_t>(std::max(sa, sb)) : std::max(a, b);
      // min/max.relu.s32 (PTX ISA 9.7.1.10/11): "clamps the result to 0 if negative".
      if constexpr (kOp == Min || kOp == Max)
        if ((in.flags & Relu) && static_cast<std::int32_t>(r) < 0) r = 0;
    }
    write_operand(w, in, in.operand(0), l, mask_bits(r, bits), t);
  }
  return Flow::Next;
}

// .ftz (PTX ISA 9.7.3 "Floating-Point Instructions" and 9.7.4 "Half Precision Floating-Point
// Instructions", each "Subnormal numbers": ".ftz ... flushes subnormal inputs and results to
// sign-preserving zero"): f32 and f16 (whose subnormals lie below 2^-14).
bool half_subnormal(double v) { return v != 0 && std::fabs(v) < std::ldexp(1.0, -14); }

double fval(Warp& w, const Insn& in, std::size_t i, int lane) {
  double v = read_float(src(w, in, i, lane), in.type);
  if ((in.flags & Ftz) && in.type == Ty::F32 && std::fpclassify(v) == FP_SUBNORMAL) v = std::copysign(0.0, v);
  if ((in.flags & Ftz) && in.type == Ty::F16 && half_subnormal(v)) v = std::copysign(0.0, v);
  return v;
}

// The .rz/.rm/.rp modifiers (PTX ISA 9.7.3 "Floating-Point Instructions", rounding modifiers
// of add/sub/mul/fma/div): the host's rounding mode while a float instruction computes.
struct RoundingScope {
  int mode = FE_TONEAREST;
  explicit RoundingScope(std::uint32_t flags) {
    mode = (flags & RoundZ) ? FE_TOWARDZERO : (flags & RoundM) ? FE_DOWNWARD : (flags & RoundP) ? FE_UPWARD : FE_TONEAREST;
    if (mode != FE_TONEAREST) std::fesetround(mode);
  }
  ~RoundingScope() {
    if (mode != FE_TONEAREST) std::fesetround(FE_TONEAREST);
  }
};

template <Op kOp>
Flow float_op(Warp& w, const Insn& in, std::uint32_t mask) {
  const Ty t = in.type;
  RoundingScope rounding(in.flags);
  EMU_FOR_LANES(mask, l) {
    double r = 0;
    if constexpr (kOp == Min || kOp == Max) {
      // min/max.NaN (PTX ISA 9.7.3.10/11, 9.7.4.7/8): "If .NaN modifier is specified, then the
      // result is canonical NaN if either of the inputs is NaN" (canonical: 0x7FFFFFFF for
      // .f32, 0x7FFF for .f16/.bf16).
      if ((in.flags & NaNs) && (std::isnan(fval(w, in, 1, l)) || std::isnan(fval(w, in, 2, l)))) {
        dst(w, in, 0, l, t == Ty::F32 ? 0x7FFFFFFFull : 0x7FFFull);
        continue;
      }
    }
    if (t == Ty::F32) {
      // Single precision computed in single precision (rounding as the GPU's .rn).
      float a = static_cast<float>(fval(w, in, 1, l));
      float f = 0;
      if constexpr (kOp == Neg) f = -a;
      else if constexpr (kOp == Abs) f = std::fabs(a);
      else {
        float b = static_cast<float>(fval(w, in, 2, l));
        if constexpr (kOp == Add) f = a + b;
        else if constexpr (kOp == Sub) f = a - b;
        else if constexpr (kOp == Mul) f = a * b;
        else if constexpr (kOp == Div) f = a / b;
        else if constexpr (kOp == Min) f = std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b);
        else if constexpr (kOp == Max) f = std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b);
        else if constexpr (kOp == Fma || kOp == Mad) f = std::fma(a, b, static_cast<float>(fval(w, in, 3, l)));
      }
      if (in.flags & Sat) f = std::isnan(f) ? 0.0f : std::min(1.0f, std::max(0.0f, f));
      r = f;
    } else {
      double a = fval(w, in, 1, l);
      if constexpr (kOp == Neg) r = -a;
      else if constexpr (kOp == Abs) r = std::fabs(a);
      else {
        double b = fval(w, in, 2, l);
        if constexpr (kOp == Add) r = a + b;
        else if constexpr (kOp == Sub) r = a - b;
        else if constexpr (kOp == Mul) r = a * b;
        else if constexpr (kOp == Div) r = a / b;
        else if constexpr (kOp == Min) r = std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b);
        else if constexpr (kOp == Max) r = std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b);
        else if constexpr (kOp == Fma || kOp == Mad) r = std::fma(a, b, fval(w, in, 3, l));
      }
      if (t == Ty::F16 || t == Ty::BF16) {
        // PTX ISA 9.7.4.1-4 (add/sub/mul/fma .f16/.bf16): ".sat ... clamps the result to
        // [0.0, 1.0]. NaN results are flushed to +0.0f" (it was ignored for these types).
        if (in.flags & Sat) r = std::isnan(r) ? 0.0 : std::min(1.0, std::max(0.0, r));
        std::uint64_t bits = write_float(r, t);
        if ((in.flags & Ftz) && t == Ty::F16 && half_subnormal(read_float(bits, t))) bits &= 0x8000;
        dst(w, in, 0, l, bits);
        continue;
      }
    }
    dst(w, in, 0, l, write_float(r, t));
  }
  return Flow::Next;
}

template <Op kInt, Op kFloat>
std::string decode_arith(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  if (out.type == Ty::None) return "no type";
  if (has_part(p, "sat")) out.flags |= Sat;
  if (has_part(p, "ftz")) out.flags |= Ftz;
  if (has_part(p, "rz")) out.flags |= RoundZ;
  if (has_part(p, "rm")) out.flags |= RoundM;
  if (has_part(p, "rp")) out.flags |= RoundP;
  if (out.type == Ty::F16x2 || out.type == Ty::BF16x2) return "packed half arithmetic is not implemented";
  // Modifiers with semantics of their own that the handlers do not model (PTX ISA 9.7.3.10/11
  // min/max ".xorsign.abs": |result| with the xor of the signs; 9.7.4.4 fma ".relu": negative
  // results clamp to 0, ".oob": out-of-bounds inputs give 0): refused rather than silently
  // computed as the plain form (they used to be).
  // Integer min/max.relu.s32 (PTX ISA 9.7.1.10/11, sm_90+: "min.relu.s32 ... clamps the result
  // to 0 if negative") is modelled; LLVM emits it for a clamp of a signed minimum at 0.
  if constexpr (kInt == Min || kInt == Max)
    if (has_part(p, "relu") && out.type == Ty::S32) out.flags |= Relu;
  for (const char* m : {"xorsign", "relu", "oob"})
    if (has_part(p, m) && !(out.flags & Relu)) return std::string(".") + m + " is not implemented";
  if (has_part(p, "NaN")) {
    if constexpr (kFloat != Min && kFloat != Max) return ".NaN is a modifier of min/max only";
    if (out.type != Ty::F32 && out.type != Ty::F16 && out.type != Ty::BF16) return ".NaN needs .f32, .f16 or .bf16";
    out.flags |= NaNs;
  }
  if (is_float(out.type)) {
    out.fn = &float_op<kFloat>;
    return "";
  }
  bool hi = has_part(p, "hi"), wide = has_part(p, "wide");
  if constexpr (kInt == Mul) out.fn = hi ? &int_op<MulHi> : wide ? &int_op<MulWide> : &int_op<Mul>;
  else if constexpr (kInt == Mad) out.fn = hi ? &int_op<MadHi> : wide ? &int_op<MadWide> : &int_op<Mad>;
  else out.fn = &int_op<kInt>;
  return "";
}

}  // namespace

void register_integer() {
  register_decoder("add", &decode_arith<Add, Add>);
  register_decoder("sub", &decode_arith<Sub, Sub>);
  register_decoder("mul", &decode_arith<Mul, Mul>);
  register_decoder("mad", &decode_arith<Mad, Mad>);
  register_decoder("fma", &decode_arith<Mad, Fma>);
  register_decoder("div", &decode_arith<Div, Div>);
  register_decoder("rem", &decode_arith<Rem, Rem>);
  register_decoder("min", &decode_arith<Min, Min>);
  register_decoder("max", &decode_arith<Max, Max>);
  register_decoder("neg", &decode_arith<Neg, Neg>);
  register_decoder("abs", &decode_arith<Abs, Abs>);
}

}  // namespace mgpu::emu
