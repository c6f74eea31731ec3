// Logic, shift and bit-field instructions (PTX ISA 9.7.1 bfe/bfi/popc/clz/brev/bfind, 9.7.8
// "Logic and Shift Instructions": and/or/xor/not/cnot/shl/shr/lop3, 9.7.9.x prmt). Predicate
// operands of and/or/xor/not are 1-bit values in their slots.
#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Op : std::uint8_t { And, Or, Xor, Not, CNot, Shl, Shr, Bfe, Bfi, Popc, Clz, Brev, Lop3, Prmt };

template <Op kOp>
Flow logic(Warp& w, const Insn& in, std::uint32_t mask) {
  const int bits = in.type == Ty::Pred ? 1 : type_bits(in.type);
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = mask_bits(src(w, in, 1, l), bits), r = 0;
    if constexpr (kOp == Not) r = ~a;
    else if constexpr (kOp == CNot) r = a == 0;
    else if constexpr (kOp == Popc) r = __builtin_popcountll(a);
    else if constexpr (kOp == Clz) r = a == 0 ? bits : __builtin_clzll(a) - (64 - bits);
    else if constexpr (kOp == Brev) {
      for (int i = 0; i < bits; ++i) r |= ((a >> i) & 1) << (bits - 1 - i);
    } else {
      std::uint64_t b = src(w, in, 2, l);
      if constexpr (kOp == And) r = a & b;
      else if constexpr (kOp == Or) r = a | b;
      else if constexpr (kOp == Xor) r = a ^ b;
      else if constexpr (kOp == Shl) r = (b & 0xFFFFFFFF) >= static_cast<std::uint64_t>(bits) ? 0 : a << b;
      else if constexpr (kOp == Shr) {
        std::uint64_t n = std::min<std::uint64_t>(b & 0xFFFFFFFF, bits);
        if (is_signed(in.type)) r = static_cast<std::uint64_t>(n >= 64 ? (sext(a, bits) < 0 ? -1 : 0) : sext(a, bits) >> n);
        else r = n >= 64 ? 0 : a >> n;
      } else if constexpr (kOp == Bfe) {
        // bfe: pos = b & 0xff, len = c & 0xff; sign-extends from the field's top bit for .s types.
        std::uint64_t pos = b & 0xFF, len = src(w, in, 3, l) & 0xFF;
        // PTX ISA 9.7.1.x bfe semantics: sbit = a[min(pos+len-1, msb)] for .s types (0 for .u or
        // len 0); d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit -- every bit above the part of
        // the field inside a is sbit, also when pos is beyond msb.
        const std::uint64_t msb = static_cast<std::uint64_t>(bits - 1);
        const std::uint64_t sbit = (is_signed(in.type) && len != 0) ? (a >> std::min(pos + len - 1, msb)) & 1 : 0;
        for (std::uint64_t i = 0; i <= msb; ++i)
          r |= ((i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit) << i;
      } else if constexpr (kOp == Bfi) {
        // bfi f = a inserted into b at pos c, len d.
        std::uint64_t pos = src(w, in, 3, l) & 0xFF, len = src(w, in, 4, l) & 0xFF;
        r = b;
        for (std::uint64_t i = 0; i < len && pos + i < static_cast<std::uint64_t>(bits); ++i)
          r = (r & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
      } else if constexpr (kOp == Lop3) {
        std::uint64_t c = src(w, in, 3, l), lut = src(w, in, 4, l);
        for (int i = 0; i < bits; ++i) {
          int idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
          r |= ((lut >> idx) & 1) << i;
        }
      } else if constexpr (kOp == Prmt) {
        // prmt.b32 (default mode): each selector nibble picks a byte of {b, a}, msb replicates sign.
        std::uint64_t c = src(w, in, 3, l);
        std::uint64_t bytes = (a & 0xFFFFFFFF) | ((b & 0xFFFFFFFF) << 32);
        for (int i = 0; i < 4; ++i) {
          std::uint64_t sel = (c >> (4 * i)) & 0xF;
          std::uint64_t byte = (bytes >> (8 * (sel & 7))) & 0xFF;
          if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0;
          r |= byte << (8 * i);
        }
      }
    }
    write_operand(w, in, in.operand(0), l, mask_bits(r, bits), in.type);
  }
  return Flow::Next;
}

// bfind (PTX ISA 9.7.1.16 "Integer Arithmetic Instructions: bfind"): the bit position of the
// most significant non-sign bit of a -- the most significant 1 of an unsigned value, the most
// significant 0 of a negative signed one (the ISA's semantics negate it: a = ~a) and the most
// significant 1 of a non-negative one; 0xffffffff when there is none. With .shiftamt, the
// left-shift that moves that bit to the most significant position (msb - d; 0xffffffff stays).
// The destination is .u32 whatever the source type (.u32, .u64, .s32, .s64).
Flow bfind(Warp& w, const Insn& in, std::uint32_t mask) {
  const int bits = type_bits(in.type);
  const std::uint64_t msb = static_cast<std::uint64_t>(bits - 1);
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = mask_bits(src(w, in, 1, l), bits);
    if (is_signed(in.type) && ((a >> msb) & 1)) a = mask_bits(~a, bits);
    std::uint64_t d = 0xFFFFFFFFu;
    if (a) d = 63 - static_cast<std::uint64_t>(__builtin_clzll(a));
    if (in.flags && d != 0xFFFFFFFFu) d = msb - d;
    write_operand(w, in, in.operand(0), l, d, Ty::U32);
  }
  return Flow::Next;
}

std::string decode_bfind(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  if (out.type != Ty::U32 && out.type != Ty::U64 && out.type != Ty::S32 && out.type != Ty::S64)
    return "bfind takes .u32, .u64, .s32 or .s64";
  for (const auto& part : p.parts)
    if (part == "shiftamt") out.flags = 1;
  out.fn = &bfind;
  return "";
}

template <Op kOp>
std::string decode_logic(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  if (out.type == Ty::None) return "no type";
  if constexpr (kOp == Prmt) {
    if (p.parts.size() > 2) return "only the default prmt mode is implemented";
  }
  out.fn = &logic<kOp>;
  return "";
}

}  // namespace

void register_misc_logic();
void register_misc_logic() {
  register_decoder("and", &decode_logic<And>);
  register_decoder("or", &decode_logic<Or>);
  register_decoder("xor", &decode_logic<Xor>);
  register_decoder("not", &decode_logic<Not>);
  register_decoder("cnot", &decode_logic<CNot>);
  register_decoder("shl", &decode_logic<Shl>);
  register_decoder("shr", &decode_logic<Shr>);
  register_decoder("bfe", &decode_logic<Bfe>);
  register_decoder("bfi", &decode_logic<Bfi>);
  register_decoder("popc", &decode_logic<Popc>);
  register_decoder("clz", &decode_logic<Clz>);
  register_decoder("brev", &decode_logic<Brev>);
  register_decoder("bfind", &decode_bfind);
  register_decoder("lop3", &decode_logic<Lop3>);
  register_decoder("prmt", &decode_logic<Prmt>);
}

}  // namespace mgpu::emu
