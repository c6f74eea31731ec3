// Data movement (PTX ISA 9.7.9: mov, ld, ldu, st, mapa, prefetch; 9.7.13.x atom, red). The
// virtual device runs one interleaving at instruction granularity; the memory order of an
// access (.weak / .relaxed / .acquire / .release / .volatile / .mmio with a scope; atom and red
// .relaxed.gpu unless they say otherwise: check/memory_order.h) is what the race detectors judge
// it by, and strong accesses synchronize through their location (release and acquire patterns,
// PTX ISA 8.8; check/memory_model.h). Cache qualifiers (.L2::...) have no effect; .nc (ld.global.nc)
// is outside the memory model (8.1), so reading bytes written in the launch through it is a
// finding (non-coherent-read).
#include <cstring>

#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

int width_of(const ptx::Instruction& p) {
  if (has_part(p, "v2")) return 2;
  if (has_part(p, "v4")) return 4;
  if (has_part(p, "v8")) return 8;
  return 1;
}

Flow mov(Warp& w, const Insn& in, std::uint32_t mask) {
  const ptx::Operand& d = in.operand(0);
  const ptx::Operand& a = in.operand(1);
  using K = ptx::Operand::Kind;
  EMU_FOR_LANES(mask, l) {
    if (a.kind == K::Vector) {  // pack: element 0 in the low bits
      int n = static_cast<int>(a.elems.size()), eb = type_bits(in.type) / n;
      std::uint64_t r = 0;
      for (int i = 0; i < n; ++i) r |= mask_bits(read_operand(w, in, a.elems[i], l), eb) << (i * eb);
      dst(w, in, 0, l, r);
    } else if (d.kind == K::Vector) {  // unpack
      int n = static_cast<int>(d.elems.size()), eb = type_bits(in.type) / n;
      std::uint64_t v = src(w, in, 1, l);
      for (int i = 0; i < n; ++i) write_operand(w, in, d.elems[i], l, mask_bits(v >> (i * eb), eb), in.type);
    } else {
      dst(w, in, 0, l, mask_bits(src(w, in, 1, l), type_bits(in.type)));
    }
  }
  return Flow::Next;
}

std::string decode_mov(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  if (out.type == Ty::None) return "no type";
  out.fn = &mov;
  return "";
}

std::uint64_t load_bytes(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

// ld.param/st.param on a call sequence's .param variable (declared in the body) is per-thread
// memory; on a kernel parameter it is the parameter buffer.
Space param_or_local(const Insn& in, const ptx::Operand& addr) {
  return in.space == Space::Param && addr.symbol >= 0 ? Space::Local : in.space;
}

// The memory order Insn::imm[5] holds (decode_ldst, decode_atom), and the order bits of one
// element of `eb` bytes (check/memory_order.h).
MemOrder order_of(const Insn& in) { return MemOrder::decode(in.imm[5]); }
enum LdFlag : std::uint32_t { NonCoherent = 1 };  // ld's Insn::flags
std::uint16_t bits_of(const MemOrder& o, int eb) { return order_bits::make(o.strong, o.scope, 0, static_cast<std::uint32_t>(eb)); }

// ld (PTX ISA 9.7.9.8): a strong ld (.relaxed/.acquire/.volatile) reads its location as the
// read of a release/acquire pattern (8.8): .acquire takes what the release it observes made
// visible at once, .relaxed/.volatile when the thread next runs an acquire fence.
Flow ld(Warp& w, const Insn& in, std::uint32_t mask) {
  const int eb = type_bits(in.type) / 8;
  const int bits = type_bits(in.type);
  const ptx::Operand& d = in.operand(0);
  const MemOrder mo = order_of(in);
  SharedLanes shared;
  EMU_FOR_LANES(mask, l) {
    std::uint64_t addr = operand_address(w, in, in.operand(1), l);
    const std::uint32_t n = static_cast<std::uint32_t>(eb * in.vec);
    Resolved r = resolve(w, in, param_or_local(in, in.operand(1)), addr, n, false, l, nullptr, bits_of(mo, eb));
    if (in.flags & NonCoherent) note_non_coherent_read(w, in, l, r, n);
    if (mo.strong) memory_sync(w, r, l, n, mo, true, false, false);
    shared.add(w, r, l);
    for (int i = 0; i < in.vec; ++i) {
      std::uint64_t v = load_bytes(r.ptr + i * eb, eb);
      if (is_signed(in.type)) v = static_cast<std::uint64_t>(sext(v, bits));
      const ptx::Operand& target = in.vec == 1 ? d : d.elems[i];
      write_operand(w, in, target, l, v, in.type);
    }
  }
  count_banks(w, in, shared, static_cast<std::uint32_t>(eb * in.vec));
  return Flow::Next;
}

// st (PTX ISA 9.7.9.10): a strong st (.relaxed/.release/.volatile) writes its location as the
// write of a release pattern (8.8): .release makes what the thread knows visible to an acquire
// that observes it; .relaxed/.volatile what it knew at its last release fence, if any.
Flow st(Warp& w, const Insn& in, std::uint32_t mask) {
  const int eb = type_bits(in.type) / 8;
  const ptx::Operand& s = in.operand(1);
  const MemOrder mo = order_of(in);
  SharedLanes shared;
  EMU_FOR_LANES(mask, l) {
    std::uint64_t addr = operand_address(w, in, in.operand(0), l);
    std::uint8_t bytes[8 * 8];
    for (int i = 0; i < in.vec; ++i) {
      const std::uint64_t v = read_operand(w, in, in.vec == 1 ? s : s.elems[i], l);
      std::memcpy(bytes + i * eb, &v, eb);
    }
    const std::uint32_t n = static_cast<std::uint32_t>(eb * in.vec);
    Resolved r = resolve(w, in, param_or_local(in, in.operand(0)), addr, n, true, l, bytes, bits_of(mo, eb));
    shared.add(w, r, l);
    std::memcpy(r.ptr, bytes, static_cast<std::size_t>(eb * in.vec));
    if (mo.strong) memory_sync(w, r, l, n, mo, false, true, false);
  }
  count_banks(w, in, shared, static_cast<std::uint32_t>(eb * in.vec));
  return Flow::Next;
}

std::string decode_ldst(const ptx::Instruction& p, Insn& out) {
  out.type = last_type(p);
  if (out.type == Ty::None || out.type == Ty::Pred) return "no data type";
  out.space = space_of(p);
  out.vec = static_cast<std::uint8_t>(width_of(p));
  const bool is_ld = p.parts[0] == "ld" || p.parts[0] == "ldu";
  const auto& data = p.operands.at(is_ld ? 0 : 1);
  if (out.vec > 1 && (data.kind != ptx::Operand::Kind::Vector || static_cast<int>(data.elems.size()) != out.vec))
    return "vector width and operand disagree";
  MemOrder mo;
  if (std::string err = parse_order(p, false, mo); !err.empty()) return err;
  out.imm[5] = mo.encode();
  if (is_ld && has_part(p, "nc")) out.flags |= NonCoherent;
  out.fn = is_ld ? &ld : &st;
  return "";
}

// mapa: PTX ISA 9.7.9.19 -- the address of the same variable in another CTA of the cluster.
Flow mapa(Warp& w, const Insn& in, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = src(w, in, 1, l);
    std::uint64_t rank = src(w, in, 2, l);
    if (rank >= w.cta->cluster->ctas.size())
      w.launch().fault(ReportKind::OutOfBounds, where(w, in, l),
                       "mapa to CTA rank " + std::to_string(rank) + " of a " + std::to_string(w.cta->cluster->ctas.size()) + "-CTA cluster");
    std::uint64_t r;
    if (in.space == Space::Generic) {
      std::uint32_t off = static_cast<std::uint32_t>(a - kSharedWindow) & kSharedOffsetMask;
      r = kSharedWindow + cluster_address(static_cast<int>(rank), off);
    } else {
      r = cluster_address(static_cast<int>(rank), static_cast<std::uint32_t>(a) & kSharedOffsetMask);
    }
    dst(w, in, 0, l, mask_bits(r, type_bits(in.type)));
  }
  return Flow::Next;
}

std::string decode_mapa(const ptx::Instruction& p, Insn& out) {
  out.space = space_of(p);
  out.type = last_type(p);
  out.fn = &mapa;
  return "";
}

// atom / red: PTX ISA 9.7.13.5 / 9.7.13.6 ("atom", "red"). Both are strong read-modify-writes,
// .relaxed and .gpu unless they say otherwise; an atom reads (its .acquire acquires, its relaxed
// read can end an acquire pattern with a later fence), red's read never forms an acquire pattern
// (8.8); both continue the release sequence their location's value heads (observation order,
// 8.9.2), and a .release one adds what its thread knows. An atom.cas whose comparison fails
// writes nothing (8.4: atomic operations are write operations "if they result in a write"): it
// is a strong read, which may still acquire but neither continues nor ends a release sequence.
enum AtomOp : std::uint8_t { AAdd, AMin, AMax, AExch, ACas, AAnd, AOr, AXor, AInc, ADec };

Flow atom(Warp& w, const Insn& in, std::uint32_t mask) {
  const bool is_red = in.flags & 1;
  const int eb = type_bits(in.type) / 8, bits = type_bits(in.type);
  const std::size_t a0 = is_red ? 0 : 1;
  const MemOrder mo = order_of(in);
  SharedLanes shared;
  EMU_FOR_LANES(mask, l) {
    std::uint64_t addr = operand_address(w, in, in.operand(a0), l);
    std::uint64_t b = src(w, in, a0 + 1, l);
    Resolved r = locate(w, in, in.space, addr, static_cast<std::uint32_t>(eb), true, l);
    shared.add(w, r, l);
    std::uint64_t old = load_bytes(r.ptr, eb), v = old;
    switch (in.op) {
      case AAdd:
        if (in.type == Ty::F32) v = f32_bits(as_f32(old) + as_f32(b));
        else if (in.type == Ty::F64) v = f64_bits(as_f64(old) + as_f64(b));
        else v = old + b;
        break;
      case AMin: v = is_signed(in.type) ? (sext(b, bits) < sext(old, bits) ? b : old) : std::min(mask_bits(old, bits), mask_bits(b, bits)); break;
      case AMax: v = is_signed(in.type) ? (sext(b, bits) > sext(old, bits) ? b : old) : std::max(mask_bits(old, bits), mask_bits(b, bits)); break;
      case AExch: v = b; break;
      case ACas: v = mask_bits(old, bits) == mask_bits(b, bits) ? src(w, in, a0 + 2, l) : old; break;
      case AAnd: v = old & b; break;
      case AOr: v = old | b; break;
      case AXor: v = old ^ b; break;
      case AInc: v = mask_bits(old, bits) >= mask_bits(b, bits) ? 0 : old + 1; break;
      case ADec: v = (mask_bits(old, bits) == 0 || mask_bits(old, bits) > mask_bits(b, bits)) ? b : old - 1; break;
    }
    const bool writes = in.op != ACas || mask_bits(old, bits) == mask_bits(b, bits);
    record(w, in, r, static_cast<std::uint32_t>(eb), writes, l, nullptr, bits_of(mo, eb), writes && !is_red, true);
    if (writes) std::memcpy(r.ptr, &v, eb);
    memory_sync(w, r, l, static_cast<std::uint32_t>(eb), mo, !is_red, writes, true);
    if (!is_red) dst(w, in, 0, l, mask_bits(old, bits));
  }
  count_banks(w, in, shared, static_cast<std::uint32_t>(eb));
  return Flow::Next;
}

std::string decode_atom(const ptx::Instruction& p, Insn& out) {
  static const char* ops[] = {"add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"};
  int op = -1;
  for (std::size_t i = 1; i < p.parts.size(); ++i)
    for (int j = 0; j < 10; ++j)
      if (p.parts[i] == ops[j]) op = j;
  if (op < 0) return "unknown atomic operation";
  if (has_part(p, "v2") || has_part(p, "v4")) return "vector atomics are not implemented";
  out.op = static_cast<std::uint8_t>(op);
  out.type = last_type(p);
  out.space = space_of(p);
  out.flags = p.parts[0] == "red" ? 1 : 0;
  if (type_bits(out.type) < 32) return "sub-word atomics are not implemented";
  MemOrder mo;
  if (std::string err = parse_order(p, true, mo); !err.empty()) return err;
  out.imm[5] = mo.encode();
  out.fn = &atom;
  return "";
}

Flow nop(Warp&, const Insn&, std::uint32_t) { return Flow::Next; }

std::string decode_prefetch(const ptx::Instruction& p, Insn& out) {
  (void)p;
  out.fn = &nop;  // a cache hint (incl. prefetch.tensormap): no effect on results
  return "";
}

}  // namespace

void register_data() {
  register_decoder("mov", &decode_mov);
  register_decoder("ld", &decode_ldst);
  register_decoder("ldu", &decode_ldst);
  register_decoder("st", &decode_ldst);
  register_decoder("mapa", &decode_mapa);
  register_decoder("atom", &decode_atom);
  register_decoder("red", &decode_atom);
  register_decoder("prefetch", &decode_prefetch);
  register_decoder("prefetchu", &decode_prefetch);
}

}  // namespace mgpu::emu
