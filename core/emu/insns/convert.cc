// Conversions (PTX ISA 9.7.9.21 cvt, 9.7.9.22 cvta). Float-to-integer conversions saturate to
// the destination range and map NaN to 0, as the ISA specifies for sm_20+; packed f16x2/bf16x2
// results put the first source in the upper half.
#include <cmath>

#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Round : std::uint8_t { RDefault, Rn, Rz, Rm, Rp, Rni, Rzi, Rmi, Rpi };
enum Flag : std::uint32_t { Sat = 1, Relu = 2 };

double round_int(double v, std::uint8_t mode) {
  switch (mode) {
    case Rzi: case Rz: return std::trunc(v);
    case Rmi: case Rm: return std::floor(v);
    case Rpi: case Rp: return std::ceil(v);
    default: return std::nearbyint(v);
  }
}

std::uint64_t to_int(double v, Ty t, std::uint8_t mode) {
  if (std::isnan(v)) return 0;
  v = round_int(v, mode);
  int bits = type_bits(t);
  if (is_signed(t)) {
    double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1) - 1;
    // 2^63 - 1 is not a double (hi rounds to 2^63, outside int64): saturate before converting.
    if (v >= std::ldexp(1.0, bits - 1)) return (1ull << (bits - 1)) - 1;
    v = std::min(std::max(v, lo), hi);
    return mask_bits(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)), bits);
  }
  double hi = std::ldexp(1.0, bits) - 1;
  v = std::min(std::max(v, 0.0), hi);
  return bits == 64 && v >= 18446744073709551615.0 ? ~0ull : static_cast<std::uint64_t>(v);
}

// A value rounded to float type t by the .rn/.rz/.rm/.rp modifier (PTX ISA 9.7.9.21 "Rounding
// modifiers": nearest even, toward zero, toward -inf, toward +inf). v is exact (an integer of up
// to 64 bits or a float, both exact in x86's long double); the nearest-even result is at most one
// step from the directed one, so it is stepped by one unit in the last place where needed.
std::uint64_t round_float(long double v, Ty t, std::uint8_t mode) {
  std::uint64_t r;
  if (t == Ty::F32) r = f32_bits(static_cast<float>(v));
  else if (t == Ty::F64) r = f64_bits(static_cast<double>(v));
  else r = write_float(static_cast<double>(v), t);
  if (mode != Rz && mode != Rm && mode != Rp) return r;
  long double back = read_float(r, t);
  if (std::isnan(v) || back == v) return r;
  const std::uint64_t sign = 1ull << (type_bits(t) - 1);
  bool down;  // step toward -inf (else toward +inf)
  if (mode == Rz) {
    if (std::fabs(back) <= std::fabs(v)) return r;
    down = back > 0;
  } else if (mode == Rm) {
    if (back <= v) return r;
    down = true;
  } else {
    if (back >= v) return r;
    down = false;
  }
  const bool neg = r & sign;
  if ((r & ~sign) == 0) return down ? (sign | 1) : 1;  // from zero: the smallest subnormal that way
  return down != neg ? r - 1 : r + 1;                  // the magnitude shrinks or grows by one ulp
}

Flow cvt(Warp& w, const Insn& in, std::uint32_t mask) {
  const Ty d = in.type, s = in.type2;
  const int sbits = type_bits(s), dbits = type_bits(d);
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = src(w, in, 1, l), r;
    if (d == Ty::BF16x2 || d == Ty::F16x2) {
      Ty half = d == Ty::BF16x2 ? Ty::BF16 : Ty::F16;
      double hi = as_f32(a), lo = as_f32(src(w, in, 2, l));
      if (in.flags & Relu) { hi = std::isnan(hi) ? hi : std::max(hi, 0.0); lo = std::isnan(lo) ? lo : std::max(lo, 0.0); }
      r = (round_float(hi, half, in.op) << 16) | round_float(lo, half, in.op);
    } else if (is_float(d) && is_float(s)) {
      double v = read_float(a, s);
      if (in.op >= Rni) v = round_int(v, in.op);
      if (in.flags & Relu) v = std::isnan(v) ? v : std::max(v, 0.0);
      if (in.flags & Sat) v = std::isnan(v) ? 0.0 : std::min(1.0, std::max(0.0, v));
      r = round_float(v, d, in.op);
    } else if (is_float(d)) {
      long double v = is_signed(s) ? static_cast<long double>(sext(a, sbits)) : static_cast<long double>(mask_bits(a, sbits));
      r = round_float(v, d, in.op);
    } else if (is_float(s)) {
      r = to_int(read_float(a, s), d, in.op);
    } else {
      std::int64_t v = is_signed(s) ? sext(a, sbits) : static_cast<std::int64_t>(mask_bits(a, sbits));
      if (in.flags & Sat) {
        if (is_signed(d)) {
          std::int64_t lo = dbits >= 64 ? INT64_MIN : -(1ll << (dbits - 1)), hi = dbits >= 64 ? INT64_MAX : (1ll << (dbits - 1)) - 1;
          if (!is_signed(s) && mask_bits(a, sbits) > static_cast<std::uint64_t>(hi)) v = hi;
          else v = std::min(std::max(v, lo), hi);
        } else {
          std::uint64_t hi = dbits >= 64 ? ~0ull : (1ull << dbits) - 1;
          if (is_signed(s) && v < 0) v = 0;
          else if (static_cast<std::uint64_t>(v) > hi) v = static_cast<std::int64_t>(hi);
        }
      }
      r = mask_bits(static_cast<std::uint64_t>(v), dbits);
      if (is_signed(d) && dbits < 64) r = static_cast<std::uint64_t>(sext(r, dbits));
    }
    write_operand(w, in, in.operand(0), l, r, d);
  }
  return Flow::Next;
}

std::string decode_cvt(const ptx::Instruction& p, Insn& out) {
  Ty types[2] = {Ty::None, Ty::None};
  int n = 0;
  for (const auto& part : p.parts) {
    Ty t = parse_type(part);
    if (t != Ty::None && n < 2) types[n++] = t;
    if (part == "rn") out.op = Rn;
    if (part == "rz") out.op = Rz;
    if (part == "rm") out.op = Rm;
    if (part == "rp") out.op = Rp;
    if (part == "rni") out.op = Rni;
    if (part == "rzi") out.op = Rzi;
    if (part == "rmi") out.op = Rmi;
    if (part == "rpi") out.op = Rpi;
    if (part == "sat" || part == "satfinite") out.flags |= Sat;
    if (part == "relu") out.flags |= Relu;
  }
  if (n != 2) return "expected destination and source types";
  out.type = types[0];
  out.type2 = types[1];
  if ((out.type == Ty::BF16x2 || out.type == Ty::F16x2) && out.type2 != Ty::F32) return "packed conversion from other than .f32";
  if (out.type == Ty::BF16x2 || out.type == Ty::F16x2) out.flags &= ~Sat;  // satfinite: finite inputs stay finite
  out.fn = &cvt;
  return "";
}

// cvta: PTX ISA 9.7.9.22. to-generic adds the window base, cvta.to subtracts it.
Flow cvta(Warp& w, const Insn& in, std::uint32_t mask) {
  std::uint64_t base = in.space == Space::Shared ? kSharedWindow : in.space == Space::Param ? kParamWindow
                     : in.space == Space::Local ? kLocalWindow : 0;
  const bool to = in.flags & 1;
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = src(w, in, 1, l);
    std::uint64_t r = to ? a - base : a + base;
    if (to && base && (a < base || a >= base + kWindowSize)) r = ~0ull;  // not in that window: undefined, faults on use
    dst(w, in, 0, l, mask_bits(r, type_bits(in.type)));
  }
  return Flow::Next;
}

std::string decode_cvta(const ptx::Instruction& p, Insn& out) {
  out.space = space_of(p);
  if (out.space == Space::SharedCluster) out.space = Space::Shared;
  out.flags = has_part(p, "to") ? 1 : 0;
  out.type = last_type(p);
  out.fn = &cvta;
  return "";
}

}  // namespace

void register_convert() {
  register_decoder("cvt", &decode_cvt);
  register_decoder("cvta", &decode_cvta);
}

}  // namespace mgpu::emu
