// tcgen05.mma .kind::f16 and tcgen05.commit (PTX ISA 9.7.16 "tcgen05.mma", "tcgen05.commit";
// descriptors 9.7.16.4): issue checks the descriptors, shapes, tensor memory ownership and the
// tensor memory hazards against other MMAs in flight, and queues the operation;
// engines/tcgen05_engine.cc performs it at a moment of the scheduler's choosing, and a commit
// arrives on its mbarrier(s) after all MMAs its thread issued before it.
#include "core/emu/insns/tcgen05.h"

#include <algorithm>
#include <cstdio>

#include "core/emu/engines/async_engine.h"
#include "core/emu/exec/access.h"

namespace mgpu::emu::tcgen05 {

namespace {

const Tcgen05InstrDesc& idesc_or_fault(Warp& w, const Insn& in, int l, std::uint32_t bits, Tcgen05InstrDesc& d) {
  if (std::string e = decode_tcgen05_instr_descriptor_f16(bits, d); !e.empty())
    w.launch().fault(ReportKind::Unsupported, where(w, in, l), "tcgen05.mma instruction descriptor 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", bits);
      return std::string(b);
    }() + ": " + e);
  const bool pair = in.flags & Group2;
  // Shapes (PTX ISA "tcgen05.mma" matrix shapes for .kind::f16, dense): M = 64/128 (::1) or
  // 128/256 (::2), N a multiple of 8/16 up to 256. The device models the full-lane ones: M = 64
  // (::1) and M = 128 (::2) use half data paths (PTX ISA 9.7.16.10.5 Layouts F and B), where D's
  // lanes agree in CUTLASS and Mosaic GPU but A in tensor memory has one source only (CUTLASS's
  // duplicated / half-subpartition A; Mosaic GPU takes A in tensor memory at M = 128 per CTA only).
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

}  // namespace

Flow tcgen05_mma(Warp& w, const Insn& in, std::uint32_t mask) {
  Launch& L = w.launch();
  Cluster& c = *w.cta->cluster;
  EMU_FOR_LANES(mask, l) {
    check_group(w, in, l);
    auto op = std::make_shared<Tcgen05MmaOp>();
    op->issued = where(w, in, l);
    op->issuer = w.cta;
    op->issuer_fence = w.cta->proxy_fenced[static_cast<std::size_t>(w.thread(l))];
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
    for (int i = 0; i < op->group; ++i) op->fenced[i] = op->ctas[i]->proxy_fenced;
    op->d_addr = static_cast<std::uint32_t>(operand_address(w, in, in.operand(0), l));
    idesc_or_fault(w, in, l, static_cast<std::uint32_t>(src(w, in, 3, l)), op->idesc);
    op->b = smem_desc_or_fault(w, in, l, src(w, in, 2, l), "B");
    // A in tensor memory ([a-tmem]) or in shared memory (a-desc): the layout of the former is in
    // engines/tcgen05_engine.cc. It is K-major only: CUTLASS's SM100_MMA_F16BF16_TS asserts
    // "A from TMEM can't be transposed", and Mosaic GPU passes A in tensor memory as K-major.
    op->a_tmem = in.operand(1).kind == ptx::Operand::Kind::Address;
    if (op->a_tmem) {
      op->a_addr = static_cast<std::uint32_t>(operand_address(w, in, in.operand(1), l));
      if (op->idesc.transpose_a)
        L.fault(ReportKind::Unsupported, op->issued,
                "tcgen05.mma with A in tensor memory and the transpose-A bit (15) of the instruction descriptor set: A in tensor memory is "
                "K-major");
    } else {
      op->a = smem_desc_or_fault(w, in, l, src(w, in, 1, l), "A");
    }
    op->accumulate = src(w, in, 4, l) & 1;
    const int rows = op->rows_per_cta();
    if (!op->a_tmem) cover(op->a, op->idesc.transpose_a, rows, op->smem_lo[0], op->smem_hi[0]);
    cover(op->b, op->idesc.transpose_b, op->idesc.n / op->group, op->smem_lo[1], op->smem_hi[1]);
    // The tensor memory it touches must be allocated by each CTA (a cta_group::2 MMA uses the same
    // addresses in both CTAs of the pair), from lane 0: M = 128 rows per CTA fill all 128 lanes.
    auto check_box = [&](Cta& cta, std::uint32_t addr, std::uint32_t ncols, const char* what) {
      const std::uint32_t lane = tmem_lane(addr), col = tmem_column(addr);
      if (lane != 0 || !tmem_of(cta).held_by(col, ncols, &cta))
        L.report(ReportKind::TmemMisuse, op->issued,
                 std::string("tcgen05.mma ") + what + " at tensor memory lanes " + cols(lane, lane + rows) + " columns " + cols(col, col + ncols) +
                     " of " + cta_name(cta) + ", not all allocated by it (tcgen05.alloc)");
    };
    for (int g = 0; g < op->group; ++g) {
      Cta& cta = *op->ctas[g];
      check_box(cta, op->d_addr, static_cast<std::uint32_t>(op->idesc.n), "writes D");
      if (op->a_tmem) check_box(cta, op->a_addr, Tcgen05MmaOp::kATmemColumns, "reads A");
    }
    // Other MMAs still in flight: one reading A where this one writes D, or writing D where this
    // one reads A, is reported as a tcgen05.st there would be -- the PTX ISA's implicit ordering
    // of one thread's MMAs ("pipelined" tcgen05 instruction pairs) is for MMAs on the same
    // accumulator, so the program must wait for the other's commit first.
    for (int g = 0; g < op->group; ++g) {
      Cta& cta = *op->ctas[g];
      const std::uint32_t dl = tmem_lane(op->d_addr), dc = tmem_column(op->d_addr), al = tmem_lane(op->a_addr), ac = tmem_column(op->a_addr);
      for (const auto& other : c.inflight) {
        if (other->kind != AsyncOp::Tcgen05Mma) continue;
        auto& m = static_cast<Tcgen05MmaOp&>(*other);
        const bool overwrites = m.reads_tmem(&cta, dl, dl + rows, dc, dc + op->idesc.n);
        if (!overwrites && !(op->a_tmem && m.writes_tmem(&cta, al, al + rows, ac, ac + Tcgen05MmaOp::kATmemColumns))) continue;
        L.report(ReportKind::TmemHazard, op->issued,
                 std::string("tcgen05.mma ") + (overwrites ? "writes D" : "reads A") + " in tensor memory of " + cta_name(cta) +
                     " where the tcgen05.mma issued at PTX line " + std::to_string(m.issued.line) +
                     (overwrites ? " still reads its A operand" : " still writes D") +
                     ": no tcgen05.commit covering it has arrived on an mbarrier this thread waited for");
        break;
      }
    }
    auto& last = w.tc_last_mma[l];
    if (last && !last->performed) op->prev = last;
    last = op;
    w.tc_uncommitted[l].push_back(op);
    c.inflight.push_back(op);
  }
  return Flow::Next;
}

Flow tcgen05_commit(Warp& w, const Insn& in, std::uint32_t mask) {
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
    if (RaceDetector* rd = w.cta->races) op->issue_clock = rd->snapshot(w.race_thread(l));
    op->ops = std::move(w.tc_uncommitted[l]);
    w.tc_uncommitted[l].clear();
    auto& last = w.tc_last_commit[l];
    if (last && !last->performed) op->prev = last;
    last = op;
    c.inflight.push_back(op);
  }
  return Flow::Next;
}

}  // namespace mgpu::emu::tcgen05
