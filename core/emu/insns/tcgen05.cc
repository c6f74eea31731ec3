// tcgen05 instructions (PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions"): the
// decoder, the helpers the handlers share, and tcgen05.fence::before/after_thread_sync
// ("tcgen05.fence": ordering of tcgen05 operations around thread synchronization -- the device
// performs ld/st in program order at issue and orders MMAs through their commits, so the fences
// have nothing further to do here). Handlers: tcgen05_alloc.cc (alloc, dealloc,
// relinquish_alloc_permit), tcgen05_mma.cc (mma .kind::f16, commit; performed by
// engines/tcgen05_engine.cc), tcgen05_ldst.cc (ld, st in every shape, wait::ld/st).
#include "core/emu/insns/tcgen05.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace tcgen05 {

std::string cta_name(const Cta& c) {
  return "CTA (" + std::to_string(c.id[0]) + "," + std::to_string(c.id[1]) + "," + std::to_string(c.id[2]) + ")";
}

// (A stream, not string concatenation: GCC 12 warns falsely (-Wrestrict) on the latter here.)
std::string cols(std::uint32_t lo, std::uint32_t hi) {
  std::ostringstream o;
  o << "[" << lo << ", " << hi << ")";
  return o.str();
}

// A shared address operand: shared::cta / shared::cluster, or generic inside the shared window.
std::uint32_t shared_operand(Warp& w, const Insn& in, const ptx::Operand& op, int l) {
  std::uint64_t a = operand_address(w, in, op, l);
  if (a >= kSharedWindow && a < kSharedWindow + kWindowSize) a -= kSharedWindow;
  return static_cast<std::uint32_t>(a);
}

// The in-flight MMAs of the cluster that write tensor memory cells of `cta` in the box, and,
// when `in` changes those cells (tcgen05.st, tcgen05.dealloc: anything but tcgen05.ld), those
// still reading A there -- an MMA reads its A from tensor memory until it completed
// (PTX ISA 9.7.16 "tcgen05.mma": the operation is asynchronous; only the mbarrier arrival of a
// tcgen05.commit covering it tells the program it completed).
void check_mma_writes(Warp& w, const Insn& in, int l, Cta& cta, std::uint32_t lane_lo, std::uint32_t lane_hi, std::uint32_t c_lo,
                      std::uint32_t c_hi, const char* what) {
  const bool changes = in.op != Ld;
  for (const auto& op : cta.cluster->inflight) {
    if (op->kind != AsyncOp::Tcgen05Mma) continue;
    auto& m = static_cast<Tcgen05MmaOp&>(*op);
    const bool writes = m.writes_tmem(&cta, lane_lo, lane_hi, c_lo, c_hi);
    if (!writes && !(changes && m.reads_tmem(&cta, lane_lo, lane_hi, c_lo, c_hi))) continue;
    w.launch().report(ReportKind::TmemHazard, where(w, in, l),
                      std::string(what) + " tensor memory lanes " + cols(lane_lo, lane_hi) + " columns " + cols(c_lo, c_hi) +
                          " that the tcgen05.mma issued at PTX line " + std::to_string(m.issued.line) +
                          (writes ? " still writes" : " still reads as its A operand") +
                          ": no tcgen05.commit covering it has arrived on an mbarrier this thread waited for");
    return;
  }
}

// "All tcgen05 instructions within a kernel must specify the same value for the .cta_group
// qualifier" (tcgen05.alloc); instructions without one (ld, st, wait, fence) are exempt.
void check_group(Warp& w, const Insn& in, int l) {
  Launch& L = w.launch();
  const int g = in.flags & Group2 ? 2 : 1;
  if (!L.tcgen05_group) L.tcgen05_group = g;
  else if (L.tcgen05_group != g)
    L.report(ReportKind::TmemMisuse, where(w, in, l),
             "tcgen05 instructions of this kernel use both .cta_group::1 and .cta_group::2 (the ISA requires one value)");
}

// The peer CTA of a cta_group::2 instruction, or a fault.
Cta& peer_of(Warp& w, const Insn& in, int l) {
  Cluster& c = *w.cta->cluster;
  const int p = w.cta->rank ^ 1;
  if (p >= static_cast<int>(c.ctas.size()))
    w.launch().fault(ReportKind::Unsupported, where(w, in, l),
                     in.src->opcode + " in CTA rank " + std::to_string(w.cta->rank) + " of a " + std::to_string(c.ctas.size()) +
                         "-CTA cluster: it has no peer CTA");
  return *c.ctas[p];
}

}  // namespace tcgen05

namespace {

using namespace tcgen05;

Flow nothing(Warp&, const Insn&, std::uint32_t) { return Flow::Next; }

std::string decode(const ptx::Instruction& p, Insn& out) {
  const std::string what = p.parts.size() > 1 ? p.parts[1] : "";
  if (has_part(p, "cta_group::2")) out.flags |= Group2;
  else if (what != "ld" && what != "st" && what.rfind("wait", 0) != 0 && what.rfind("fence", 0) != 0 && !has_part(p, "cta_group::1"))
    return "a tcgen05." + what + " without .cta_group::1 or ::2";
  out.aligned = has_part(p, "aligned");
  if (what == "alloc" || what == "dealloc" || what == "relinquish_alloc_permit") {
    if (!out.aligned) return "tcgen05." + what + " without .sync.aligned";
    out.op = what == "alloc" ? Alloc : what == "dealloc" ? Dealloc : Relinquish;
    out.fn = &tcgen05_alloc;
    return "";
  }
  if (what == "mma") {
    if (!has_part(p, "kind::f16")) return "tcgen05.mma kinds other than .kind::f16 are not implemented";
    if (has_part(p, "ws") || has_part(p, "sp") || has_part(p, "block_scale")) return "tcgen05.mma.ws/.sp/.block_scale are not implemented";
    if (p.operands.size() != 5) return "tcgen05.mma with disable-output-lane or scale-input-d operands is not implemented";
    out.op = Mma;
    out.fn = &tcgen05_mma;
    return "";
  }
  if (what == "commit") {
    if (!has_part(p, "mbarrier::arrive::one")) return "tcgen05.commit without .mbarrier::arrive::one";
    if (has_part(p, "multicast::cluster")) {
      out.flags |= Multicast;
      if (p.operands.size() != 2) return "tcgen05.commit.multicast::cluster needs a CTA mask operand";
    }
    out.op = Commit;
    out.fn = &tcgen05_commit;
    return "";
  }
  if (what == "ld" || what == "st") {
    // PTX ISA 9.7.16 "tcgen05.ld" and "tcgen05.st":
    //   tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32    r, [taddr]{, immHalfSplitoff};
    //   tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32  [taddr]{, immHalfSplitoff}, r;
    // immHalfSplitoff with .16x32bx2 only. The registers per .num, and so the .num each shape
    // allows, follow their table "Number of registers" (x1: 1 for .32x32b, .16x64b and
    // .16x32bx2, 2 for .16x128b, 4 for .16x256b; doubling with .num up to 128 registers).
    if (!out.aligned) return "tcgen05." + what + " without .sync.aligned";
    if (has_part(p, "red")) return "tcgen05.ld.red is not implemented";
    const bool ld = what == "ld";
    if (has_part(p, ld ? "unpack::16b" : "pack::16b"))
      return "tcgen05." + what + (ld ? " takes .pack::16b, not .unpack::16b" : " takes .unpack::16b, not .pack::16b");
    struct ShapeRow {
      const char* name;
      Shape shape;
      int regs_per_x1, max_num;
    };
    static const ShapeRow rows[] = {{"32x32b", S32x32b, 1, 128}, {"16x64b", S16x64b, 1, 128}, {"16x128b", S16x128b, 2, 64},
                                    {"16x256b", S16x256b, 4, 32}, {"16x32bx2", S16x32bx2, 1, 128}};
    const ShapeRow* row = nullptr;
    for (const auto& r : rows)
      if (has_part(p, r.name)) row = &r;
    if (!row) return "tcgen05." + what + " without a shape (.32x32b, .16x64b, .16x128b, .16x256b or .16x32bx2)";
    const std::string name = "tcgen05." + what + "." + row->name;
    int num = 0;
    for (const auto& s : p.parts)
      if (s.size() > 1 && s[0] == 'x' && std::isdigit(static_cast<unsigned char>(s[1]))) num = std::atoi(s.c_str() + 1);
    if (num < 1 || num > row->max_num || (num & (num - 1)))
      return name + " needs .num in .x1 .. .x" + std::to_string(row->max_num) + " (a power of two), not .x" + std::to_string(num);
    const int nregs = num * row->regs_per_x1;
    const bool split = row->shape == S16x32bx2;
    const std::size_t nops = split ? 3 : 2, vec = ld ? 0 : nops - 1;
    if (p.operands.size() != nops)
      return name + (split ? " needs the immHalfSplitoff operand after the address" : " takes no operand after the address");
    const auto& v = p.operands[vec];
    if (v.kind != ptx::Operand::Kind::Vector || static_cast<int>(v.elems.size()) != nregs)
      return name + ".x" + std::to_string(num) + " needs a vector of " + std::to_string(nregs) + " registers";
    if (ld)
      for (const auto& e : v.elems)
        if (e.kind != ptx::Operand::Kind::Reg) return name + " needs registers as destinations";
    if (split) {
      const auto& imm = p.operands[ld ? 2 : 1];
      if (imm.kind != ptx::Operand::Kind::Imm || imm.imm < 0 || imm.imm > 0xFFFF)
        return name + " needs immHalfSplitoff as an immediate column offset";
      out.imm[2] = static_cast<std::int32_t>(imm.imm);
    }
    if (has_part(p, ld ? "pack::16b" : "unpack::16b")) out.flags |= Pack16;
    out.imm[0] = nregs;
    out.imm[1] = row->shape;
    out.op = ld ? Ld : St;
    out.fn = &tcgen05_ldst;
    return "";
  }
  if (what == "wait::ld" || what == "wait::st") {
    if (!out.aligned) return "tcgen05." + what + " without .sync.aligned";
    out.op = what == "wait::ld" ? WaitLd : WaitSt;
    out.fn = &tcgen05_wait;
    return "";
  }
  if (what == "fence::before_thread_sync" || what == "fence::after_thread_sync") {
    out.op = Fence;
    out.fn = &nothing;
    return "";
  }
  return "tcgen05." + what + " is not implemented";
}

}  // namespace

void register_tcgen05() { register_decoder("tcgen05", &decode); }

}  // namespace mgpu::emu
