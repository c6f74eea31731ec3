// Comparison and selection (PTX ISA 9.7.7 "Comparison and Selection Instructions": setp,
// selp, set, slct). Unordered float compares (equ, ltu, ...) are true when either side is NaN.
#include <cmath>
#include <cstring>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Cmp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan };
enum BoolOp : std::uint32_t { BNone = 0, BAnd = 1, BOr = 2, BXor = 3 };

bool compare(const Insn& in, std::uint64_t a, std::uint64_t b) {
  const Ty t = in.type;
  const int bits = type_bits(t);
  if (is_float(t)) {
    double x = read_float(a, t), y = read_float(b, t);
    bool un = std::isnan(x) || std::isnan(y);
    switch (in.op) {
      case Eq: return !un && x == y;
      case Ne: return !un && x != y;
      case Lt: return !un && x < y;
      case Le: return !un && x <= y;
      case Gt: return !un && x > y;
      case Ge: return !un && x >= y;
      case Equ: return un || x == y;
      case Neu: return un || x != y;
      case Ltu: return un || x < y;
      case Leu: return un || x <= y;
      case Gtu: return un || x > y;
      case Geu: return un || x >= y;
      case Num: return !un;
      case Nan: return un;
      default: return false;
    }
  }
  std::uint64_t ua = mask_bits(a, bits), ub = mask_bits(b, bits);
  std::int64_t sa = sext(a, bits), sb = sext(b, bits);
  bool sg = is_signed(t);
  switch (in.op) {
    case Eq: return ua == ub;
    case Ne: return ua != ub;
    case Lt: return sg ? sa < sb : ua < ub;
    case Le: return sg ? sa <= sb : ua <= ub;
    case Gt: return sg ? sa > sb : ua > ub;
    case Ge: return sg ? sa >= sb : ua >= ub;
    case Lo: return ua < ub;
    case Ls: return ua <= ub;
    case Hi: return ua > ub;
    case Hs: return ua >= ub;
    default: return false;
  }
}

Flow setp(Warp& w, const Insn& in, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) {
    bool r = compare(in, src(w, in, 1, l), src(w, in, 2, l));
    if (in.flags != BNone) {
      bool c = src(w, in, 3, l) & 1;
      r = in.flags == BAnd ? (r && c) : in.flags == BOr ? (r || c) : (r != c);
    }
    write_operand(w, in, in.operand(0), l, r, Ty::Pred);
  }
  return Flow::Next;
}

Flow set(Warp& w, const Insn& in, std::uint32_t mask) {
  // set.CmpOp.dtype.stype: d = all ones (integer) or 1.0f when true.
  EMU_FOR_LANES(mask, l) {
    bool r = compare(in, src(w, in, 1, l), src(w, in, 2, l));
    std::uint64_t v = in.type2 == Ty::F32 ? (r ? f32_bits(1.0f) : 0) : (r ? 0xFFFFFFFFull : 0);
    write_operand(w, in, in.operand(0), l, v, in.type2);
  }
  return Flow::Next;
}

Flow selp(Warp& w, const Insn& in, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) {
    dst(w, in, 0, l, (src(w, in, 3, l) & 1) ? src(w, in, 1, l) : src(w, in, 2, l));
  }
  return Flow::Next;
}

int cmp_of(const ptx::Instruction& p) {
  static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                                "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  for (const auto& part : p.parts)
    for (int i = 0; i < 18; ++i)
      if (part == names[i]) return i;
  return -1;
}

std::string decode_setp(const ptx::Instruction& p, Insn& out) {
  int c = cmp_of(p);
  if (c < 0) return "no comparison operator";
  out.op = static_cast<std::uint8_t>(c);
  out.type = last_type(p);
  out.flags = has_part(p, "and") ? BAnd : has_part(p, "or") ? BOr : has_part(p, "xor") ? BXor : BNone;
  if (p.operands.size() > 0 && p.operands[0].kind == ptx::Operand::Kind::Vector) return "two-destination setp is not implemented";
  out.fn = &setp;
  return "";
}

std::string decode_set(const ptx::Instruction& p, Insn& out) {
  int c = cmp_of(p);
  if (c < 0) return "no comparison operator";
  out.op = static_cast<std::uint8_t>(c);
  // set.cmp.dtype.stype: the last type is the source type.
  Ty types[2] = {Ty::None, Ty::None};
  int n = 0;
  for (const auto& part : p.parts)
    if (parse_type(part) != Ty::None && n < 2) types[n++] = parse_type(part);
  if (n != 2) return "expected destination and source types";
  out.type2 = types[0];
  out.type = types[1];
  out.fn = &set;
  return "";
}

std::string decode_selp(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  out.fn = &selp;
  return "";
}

}  // namespace

void register_compare();
void register_compare() {
  register_decoder("setp", &decode_setp);
  register_decoder("set", &decode_set);
  register_decoder("selp", &decode_selp);
}

}  // namespace mgpu::emu
