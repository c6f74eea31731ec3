// tcgen05 instructions (PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions"):
//  - tcgen05.alloc / dealloc / relinquish_alloc_permit ("Tensor Memory Allocation and
//    Management Instructions"): a warp allocates a power-of-two number of columns (32..512) of
//    its SM's tensor memory and the address is written to shared memory; an allocation that
//    cannot be satisfied blocks until columns are freed (a deadlock when nothing ever frees them).
//  - tcgen05.mma .kind::f16 ("tcgen05.mma"), single-thread, asynchronous: engines/tcgen05_engine.cc.
//  - tcgen05.commit .mbarrier::arrive::one ("tcgen05.commit"): an arrival after all prior async
//    tcgen05 operations of the thread complete, on each CTA of the mask with .multicast::cluster.
//  - tcgen05.ld / st .32x32b.xN ("tcgen05.ld", "tcgen05.st"; "Matrix fragments for shape
//    .32x32b": thread t of the warp accesses lane base + t, register r column base + r) and
//    tcgen05.wait::ld / ::st ("tcgen05.wait"). A load's registers are NaN and touching them is
//    reported until wait::ld delivers the values read at issue; a store writes at issue.
//  - tcgen05.fence::before/after_thread_sync ("tcgen05.fence"): ordering of tcgen05 operations
//    around thread synchronization. The device performs ld/st in program order at issue and
//    orders MMAs through their commits, so the fences have nothing further to do here.
#include <cstring>
#include <sstream>

#include "core/emu/engines/async_engine.h"
#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {
namespace {

enum Op : std::uint8_t { Alloc, Dealloc, Relinquish, Mma, Commit, Ld, St, WaitLd, WaitSt, Fence };
enum Flag : std::uint32_t { Group2 = 1, Multicast = 2 };

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

// The in-flight MMAs of the cluster that write tensor memory cells of `cta` in the box.
void check_mma_writes(Warp& w, const Insn& in, int l, Cta& cta, std::uint32_t lane_lo, std::uint32_t lane_hi, std::uint32_t c_lo,
                      std::uint32_t c_hi, const char* what) {
  for (const auto& op : cta.cluster->inflight) {
    if (op->kind != AsyncOp::Tcgen05Mma) continue;
    auto& m = static_cast<Tcgen05MmaOp&>(*op);
    if (!m.writes_tmem(&cta, lane_lo, lane_hi, c_lo, c_hi)) continue;
    w.launch().report(ReportKind::TmemHazard, where(w, in, l),
                      std::string(what) + " tensor memory lanes " + cols(lane_lo, lane_hi) + " columns " + cols(c_lo, c_hi) +
                          " that the tcgen05.mma issued at PTX line " + std::to_string(m.issued.line) +
                          " still writes: no tcgen05.commit covering it has arrived on an mbarrier this thread waited for");
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

// A cta_group::2 alloc/dealloc is performed by one warp of each CTA of the pair together: the
// first to get here waits ("Issue Granularity": "the first warp to perform the operation could
// block until the second warp in the Peer CTA also performs the operation"). An allocation
// takes the same columns in both CTAs' tensor memory, once both warps are there and both have
// them free ("ownership is held jointly by both peer CTAs").
Flow pair_alloc(Warp& w, const Insn& in, std::uint32_t mask, std::uint32_t n) {
  Cta& cta = *w.cta;
  const int l0 = __builtin_ctz(mask);
  Cta& peer = peer_of(w, in, l0);
  int col = cta.tc_alloc_result;
  if (col < 0) {
    cta.tc_alloc_req = n;
    cta.tc_alloc_warp = w.index;
    if (peer.tc_alloc_req != 0 && peer.tc_alloc_req != n)
      w.launch().report(ReportKind::TmemMisuse, where(w, in, l0),
                        "tcgen05.alloc.cta_group::2 of " + std::to_string(n) + " columns while the peer CTA's warp asks for " +
                            std::to_string(peer.tc_alloc_req));
    if (!peer.tc_alloc_req || (col = tmem_of(cta).first_fit(n, &tmem_of(peer))) < 0) {
      EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemPairAlloc, 0, n};
      return Flow::Block;
    }
    tmem_of(cta).take(static_cast<std::uint32_t>(col), n, &cta, w.index, in.line());
    tmem_of(peer).take(static_cast<std::uint32_t>(col), peer.tc_alloc_req, &peer, peer.tc_alloc_warp, in.line());
    peer.tc_alloc_result = col;  // its warp writes the address when it wakes
  }
  cta.tc_alloc_result = -1;
  cta.tc_alloc_req = 0;
  const std::uint32_t addr = static_cast<std::uint32_t>(col);  // lane 0, column col
  Resolved r = resolve(w, in, Space::Shared, shared_operand(w, in, in.operand(0), l0), 4, true, l0);
  std::memcpy(r.ptr, &addr, 4);
  return Flow::Next;
}

Flow rendezvous(Warp& w, const Insn& in, std::uint32_t mask) {
  Cta& cta = *w.cta;
  const std::uint64_t k = ++cta.tc_collective;
  if (peer_of(w, in, __builtin_ctz(mask)).tc_collective >= k) return Flow::Next;
  EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemPeer, 0, k};
  return Flow::Block;
}

Flow alloc(Warp& w, const Insn& in, std::uint32_t mask) {
  Launch& L = w.launch();
  Cta& cta = *w.cta;
  const int l0 = __builtin_ctz(mask);
  // Woken from the rendezvous: this warp's part was done before it waited.
  if (w.wait[l0].kind == Wait::TmemPeer) return Flow::Next;
  check_group(w, in, l0);
  const bool pair = in.flags & Group2;
  if (pair) peer_of(w, in, l0);
  switch (in.op) {
    case Alloc: {
      const std::uint64_t n = src(w, in, 1, l0);
      if (std::string e = TensorMemory::check_columns(n); !e.empty()) L.fault(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.alloc: " + e);
      if (cta.tmem_permit_relinquished && w.wait[l0].kind == Wait::None)
        L.report(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.alloc after this CTA executed tcgen05.relinquish_alloc_permit");
      if (pair) return pair_alloc(w, in, mask, static_cast<std::uint32_t>(n));
      int col = tmem_of(cta).allocate(static_cast<std::uint32_t>(n), &cta, w.index, in.line());
      if (col < 0) {
        EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::TmemAlloc, 0, n};
        return Flow::Block;
      }
      const std::uint32_t addr = static_cast<std::uint32_t>(col);  // lane 0, column col
      Resolved r = resolve(w, in, Space::Shared, shared_operand(w, in, in.operand(0), l0), 4, true, l0);
      std::memcpy(r.ptr, &addr, 4);
      return Flow::Next;
    }
    case Dealloc: {
      const std::uint32_t a = static_cast<std::uint32_t>(src(w, in, 0, l0));
      const std::uint64_t n = src(w, in, 1, l0);
      if (std::string e = TensorMemory::check_columns(n); !e.empty()) L.fault(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.dealloc: " + e);
      const std::uint32_t c0 = tmem_column(a), c1 = c0 + static_cast<std::uint32_t>(n);
      check_mma_writes(w, in, l0, cta, 0, TensorMemory::kLanes, c0, c1, "tcgen05.dealloc frees");
      if (tmem_lane(a) != 0) L.report(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.dealloc of an address with lane " + std::to_string(tmem_lane(a)) + " (not one tcgen05.alloc returned)");
      if (std::string e = tmem_of(cta).deallocate(c0, static_cast<std::uint32_t>(n), &cta); !e.empty())
        L.report(ReportKind::TmemMisuse, where(w, in, l0), "tcgen05.dealloc: " + e);
      return pair ? rendezvous(w, in, mask) : Flow::Next;
    }
    default:
      cta.tmem_permit_relinquished = true;
      return Flow::Next;
  }
}

const Tcgen05InstrDesc& idesc_or_fault(Warp& w, const Insn& in, int l, std::uint32_t bits, Tcgen05InstrDesc& d) {
  if (std::string e = decode_tcgen05_instr_descriptor_f16(bits, d); !e.empty())
    w.launch().fault(ReportKind::Unsupported, where(w, in, l), "tcgen05.mma instruction descriptor 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", bits);
      return std::string(b);
    }() + ": " + e);
  const bool pair = in.flags & Group2;
  // Shapes (PTX ISA "tcgen05.mma" matrix shapes for .kind::f16, dense): M = 64/128 (::1) or
  // 128/256 (::2), N a multiple of 8/16 up to 256. The device models the full-lane ones.
  if (d.m != (pair ? 256 : 128))
    w.launch().fault(ReportKind::Unsupported, where(w, in, l),
                     "tcgen05.mma with M = " + std::to_string(d.m) + (pair ? " in a CTA pair" : "") + ": the virtual device models M = " +
                         (pair ? "256 for cta_group::2" : "128 for cta_group::1"));
  if (d.n < 16 || d.n > 256 || d.n % 16)
    w.launch().fault(ReportKind::Unsupported, where(w, in, l), "tcgen05.mma with N = " + std::to_string(d.n) + " (16..256, a multiple of 16)");
  if (d.d_type != Ty::F32) w.launch().fault(ReportKind::Unsupported, where(w, in, l), "tcgen05.mma with an f16 accumulator is not modelled");
  return d;
}

MatrixDescriptor smem_desc_or_fault(Warp& w, const Insn& in, int l, std::uint64_t bits, const char* which) {
  MatrixDescriptor m;
  if (std::string e = decode_tcgen05_smem_descriptor(bits, m); !e.empty())
    w.launch().fault(ReportKind::Unsupported, where(w, in, l), std::string("tcgen05.mma ") + which + " descriptor: " + e);
  if (m.base_offset)
    w.launch().fault(ReportKind::Unsupported, where(w, in, l), std::string("tcgen05.mma ") + which + " descriptor with base offset " +
                                                                  std::to_string(m.base_offset) + ": the virtual device models base offset 0 only");
  return m;
}

// The shared bytes operand `d` spans for `rows` rows of K = 16.
void cover(const MatrixDescriptor& d, bool mn_major, int rows, std::uint32_t& lo, std::uint32_t& hi) {
  lo = UINT32_MAX;
  hi = 0;
  for (int mn = 0; mn < rows; ++mn)
    for (int k = 0; k < 16; ++k) {
      std::uint32_t a = wgmma_operand_address(d, mn_major, 2, mn, k);
      lo = std::min(lo, a);
      hi = std::max(hi, a + 2);
    }
}

Flow mma(Warp& w, const Insn& in, std::uint32_t mask) {
  Launch& L = w.launch();
  Cluster& c = *w.cta->cluster;
  EMU_FOR_LANES(mask, l) {
    check_group(w, in, l);
    auto op = std::make_shared<Tcgen05MmaOp>();
    op->issued = where(w, in, l);
    op->group = in.flags & Group2 ? 2 : 1;
    if (op->group == 2) {
      const int even = w.cta->rank & ~1;
      if (even + 1 >= static_cast<int>(c.ctas.size()))
        L.fault(ReportKind::Unsupported, op->issued, "tcgen05.mma.cta_group::2 in CTA rank " + std::to_string(w.cta->rank) + " of a " +
                                                         std::to_string(c.ctas.size()) + "-CTA cluster: it has no peer CTA");
      op->ctas[0] = c.ctas[even].get();
      op->ctas[1] = c.ctas[even + 1].get();
    } else {
      op->ctas[0] = w.cta;
    }
    op->d_addr = static_cast<std::uint32_t>(operand_address(w, in, in.operand(0), l));
    // A in tensor memory ([a-tmem]): its lane/column layout is not modelled yet -- no source the
    // device could cross-check it against (ISA figure, CUTLASS, Mosaic GPU) was at hand.
    if (in.operand(1).kind == ptx::Operand::Kind::Address)
      L.fault(ReportKind::Unsupported, op->issued, "tcgen05.mma with A in tensor memory: its layout is not modelled yet");
    idesc_or_fault(w, in, l, static_cast<std::uint32_t>(src(w, in, 3, l)), op->idesc);
    op->b = smem_desc_or_fault(w, in, l, src(w, in, 2, l), "B");
    op->a = smem_desc_or_fault(w, in, l, src(w, in, 1, l), "A");
    op->accumulate = src(w, in, 4, l) & 1;
    const int rows = op->rows_per_cta();
    cover(op->a, op->idesc.transpose_a, rows, op->smem_lo[0], op->smem_hi[0]);
    cover(op->b, op->idesc.transpose_b, op->idesc.n / op->group, op->smem_lo[1], op->smem_hi[1]);
    // The tensor memory it touches must be allocated by each CTA.
    for (int g = 0; g < op->group; ++g) {
      Cta& cta = *op->ctas[g];
      const std::uint32_t dc = tmem_column(op->d_addr);
      if (tmem_lane(op->d_addr) != 0 || !tmem_of(cta).held_by(dc, static_cast<std::uint32_t>(op->idesc.n), &cta))
        L.report(ReportKind::TmemMisuse, op->issued,
                 "tcgen05.mma writes D at tensor memory lanes " + cols(tmem_lane(op->d_addr), tmem_lane(op->d_addr) + rows) + " columns " +
                     cols(dc, dc + op->idesc.n) + " of " + cta_name(cta) + ", not all allocated by it (tcgen05.alloc)");
    }
    auto& last = w.tc_last_mma[l];
    if (last && !last->performed) op->prev = last;
    last = op;
    w.tc_uncommitted[l].push_back(op);
    c.inflight.push_back(op);
  }
  return Flow::Next;
}

Flow commit(Warp& w, const Insn& in, std::uint32_t mask) {
  Cluster& c = *w.cta->cluster;
  EMU_FOR_LANES(mask, l) {
    check_group(w, in, l);
    auto op = std::make_shared<Tcgen05CommitOp>();
    op->issued = where(w, in, l);
    op->issuer = w.cta;
    std::uint32_t off;
    Cta& target = shared_target(w, in, shared_operand(w, in, in.operand(0), l), 8, l, off);
    op->mbar = off;
    if (in.flags & Multicast) op->cta_mask = static_cast<std::uint32_t>(src(w, in, 1, l)) & ((1u << c.ctas.size()) - 1);
    else op->cta_mask = 1u << target.rank;
    op->ops = std::move(w.tc_uncommitted[l]);
    w.tc_uncommitted[l].clear();
    auto& last = w.tc_last_commit[l];
    if (last && !last->performed) op->prev = last;
    last = op;
    c.inflight.push_back(op);
  }
  return Flow::Next;
}

// tcgen05.ld / st .32x32b: the warp's quarter of the lanes (warp w accesses lanes
// 32 * (w % 4) .. + 31: "Access restrictions" of tensor memory), register r at column base + r.
struct Box {
  std::uint32_t lane0, col0, ncols;
};

Box box_of(Warp& w, const Insn& in, const ptx::Operand& addr_op, std::uint32_t mask, const char* what) {
  Launch& L = w.launch();
  const int l0 = __builtin_ctz(mask);
  const std::uint32_t a = static_cast<std::uint32_t>(operand_address(w, in, addr_op, l0));
  EMU_FOR_LANES(mask, l)
  if (static_cast<std::uint32_t>(operand_address(w, in, addr_op, l)) != a)
    L.fault(ReportKind::TmemMisuse, where(w, in, l), std::string(what) + ": the lanes of the warp give different tensor memory addresses");
  Box b{tmem_lane(a), tmem_column(a), static_cast<std::uint32_t>(in.imm[0])};
  const std::uint32_t quarter = 32u * (static_cast<std::uint32_t>(w.index) % 4);
  if (b.lane0 != quarter)
    L.report(ReportKind::TmemMisuse, where(w, in, l0),
             std::string(what) + " at tensor memory lane " + std::to_string(b.lane0) + " by warp " + std::to_string(w.index) +
                 ", which may access lanes " + cols(quarter, quarter + 32) + " only");
  if (b.lane0 + 32 > TensorMemory::kLanes || b.col0 + b.ncols > TensorMemory::kColumns)
    L.fault(ReportKind::OutOfBounds, where(w, in, l0), std::string(what) + " beyond the 128 lanes x 512 columns of tensor memory");
  if (!tmem_of(*w.cta).held_by(b.col0, b.ncols, w.cta))
    L.report(ReportKind::TmemMisuse, where(w, in, l0),
             std::string(what) + " of tensor memory columns " + cols(b.col0, b.col0 + b.ncols) + " not all allocated by this CTA");
  return b;
}

Flow ldst(Warp& w, const Insn& in, std::uint32_t mask) {
  Cta& cta = *w.cta;
  const int l0 = __builtin_ctz(mask);
  TensorMemory& tm = tmem_of(cta);
  if (in.op == Ld) {
    const ptx::Operand& regs = in.operand(0);
    Box b = box_of(w, in, in.operand(1), mask, "tcgen05.ld");
    check_mma_writes(w, in, l0, cta, b.lane0, b.lane0 + 32, b.col0, b.col0 + b.ncols, "tcgen05.ld reads");
    for (std::uint32_t r = 0; r < b.ncols; ++r) {
      const int slot = regs.elems[r].reg;
      std::vector<std::uint32_t> v(32, 0xFFFFFFFFu);
      EMU_FOR_LANES(mask, l) {
        v[l] = tm.cell(b.lane0 + l, b.col0 + r);
        w.reg(slot, l) = 0xFFFFFFFFu;  // NaN until tcgen05.wait::ld
      }
      w.tmem_pending[slot] = 1;
      w.tmem_loads.emplace_back(slot, std::move(v));
    }
    return Flow::Next;
  }
  const ptx::Operand& regs = in.operand(1);
  Box b = box_of(w, in, in.operand(0), mask, "tcgen05.st");
  check_mma_writes(w, in, l0, cta, b.lane0, b.lane0 + 32, b.col0, b.col0 + b.ncols, "tcgen05.st writes");
  for (std::uint32_t r = 0; r < b.ncols; ++r)
    EMU_FOR_LANES(mask, l) tm.cell(b.lane0 + l, b.col0 + r) = static_cast<std::uint32_t>(read_operand(w, in, regs.elems[r], l));
  return Flow::Next;
}

Flow wait(Warp& w, const Insn& in, std::uint32_t mask) {
  if (in.op == WaitLd) {
    for (auto& [slot, v] : w.tmem_loads) {
      for (int l = 0; l < 32; ++l)
        if ((mask >> l) & 1) w.reg(slot, l) = v[l];
      w.tmem_pending[slot] = 0;
    }
    w.tmem_loads.clear();
  }
  return Flow::Next;
}

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
    out.fn = &alloc;
    return "";
  }
  if (what == "mma") {
    if (!has_part(p, "kind::f16")) return "tcgen05.mma kinds other than .kind::f16 are not implemented";
    if (has_part(p, "ws") || has_part(p, "sp") || has_part(p, "block_scale")) return "tcgen05.mma.ws/.sp/.block_scale are not implemented";
    if (p.operands.size() != 5) return "tcgen05.mma with disable-output-lane or scale-input-d operands is not implemented";
    out.op = Mma;
    out.fn = &mma;
    return "";
  }
  if (what == "commit") {
    if (!has_part(p, "mbarrier::arrive::one")) return "tcgen05.commit without .mbarrier::arrive::one";
    if (has_part(p, "multicast::cluster")) {
      out.flags |= Multicast;
      if (p.operands.size() != 2) return "tcgen05.commit.multicast::cluster needs a CTA mask operand";
    }
    out.op = Commit;
    out.fn = &commit;
    return "";
  }
  if (what == "ld" || what == "st") {
    if (!out.aligned) return "tcgen05." + what + " without .sync.aligned";
    if (has_part(p, "pack::16b") || has_part(p, "unpack::16b")) return "tcgen05." + what + " .pack::16b/.unpack::16b is not implemented";
    if (!has_part(p, "32x32b"))
      return "tcgen05." + what + " shapes other than .32x32b (.16x64b, .16x128b, .16x256b, .16x32bx2) are not implemented: their register layouts are not modelled yet";
    int num = 0;
    for (const auto& s : p.parts)
      if (s.size() > 1 && s[0] == 'x' && std::isdigit(static_cast<unsigned char>(s[1]))) num = std::atoi(s.c_str() + 1);
    if (num < 1 || num > 128 || (num & (num - 1))) return "tcgen05." + what + " needs .num in .x1 .. .x128";
    const std::size_t vec = what == "ld" ? 0 : 1;
    if (p.operands.size() != 2 || p.operands[vec].kind != ptx::Operand::Kind::Vector || static_cast<int>(p.operands[vec].elems.size()) != num)
      return "tcgen05." + what + ".32x32b.x" + std::to_string(num) + " needs a vector of " + std::to_string(num) + " registers";
    out.imm[0] = num;
    out.op = what == "ld" ? Ld : St;
    out.fn = &ldst;
    return "";
  }
  if (what == "wait::ld" || what == "wait::st") {
    if (!out.aligned) return "tcgen05." + what + " without .sync.aligned";
    out.op = what == "wait::ld" ? WaitLd : WaitSt;
    out.fn = &wait;
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
