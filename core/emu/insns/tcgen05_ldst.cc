// tcgen05.ld / st and tcgen05.wait::ld / ::st (PTX ISA 9.7.16 "tcgen05.ld", "tcgen05.st",
// "tcgen05.wait"). A load's registers read as NaN, and touching them is reported, until wait::ld
// delivers the values read at issue; a store writes at issue.
//
// Where thread t (0-31) of the warp puts register r, relative to the address's lane and column
// (9.7.16.2.3.1 "Matrix fragments for shape ..."; the figures are images, so each rule below was
// read off them and cross-checked against CUTLASS's Copy_Traits<SM100_TMEM_LOAD_{32dp32b,16dp64b,
// 16dp128b,16dp256b,16dp32b}Nx> (cute/atom/copy_traits_sm100.hpp, ValID/DstLayout) and Triton's
// getTileLayout (TMemAccessAtom); .16x128b and .16x256b also against JAX Mosaic GPU's
// _load_32xcols / _store_32xcols (tcgen05.py: "a num tile has 2 registers, 8 rows apart" /
// "a 2x2, with the minor dim traversing columns and major being 8 rows apart"). All agree):
//   .32x32b   (32 lanes, 1 register a .num):  lane t,                    column r
//   .16x64b   (16 lanes, 1 register a .num):  lane t/4 + 8*(t%2),        column 2*r + (t/2)%2
//   .16x128b  (16 lanes, 2 registers a .num): lane t/4 + 8*(r%2),        column 4*(r/2) + t%4
//   .16x256b  (16 lanes, 4 registers a .num): lane t/4 + 8*((r/2)%2),    column 8*(r/4) + 2*(t%4) + r%2
//   .16x32bx2 (16 lanes, 1 register a .num):  lane t%16,                 column r, plus immHalfSplitoff
//             for threads 16-31 ("two accesses of shape .16x32b", the second at taddr + immHalfSplitoff)
// .num repeats the shape along the columns (so r's repetition is r / registers-per-.num).
// .pack::16b / .unpack::16b: each 32-bit register holds two 16-bit elements of adjacent columns, so
// the column c above becomes the pair 2c (bits 0-15 of the register) and 2c + 1 (bits 16-31), and
// the access spans twice the columns (CUTLASS's *_16b ValIDs: bits 0-15 of each column; JAX reads
// an unpacked 16-bit element as the low half of its column). immHalfSplitoff, part of the
// address, is not doubled. The ISA leaves the upper halves of columns written by .unpack::16b
// unspecified; the device writes ones there (the device's "undefined", like unwritten cells), so
// a 32-bit read of them is a NaN, not a plausible value.
#include "core/emu/insns/tcgen05.h"

#include "core/emu/exec/access.h"

namespace mgpu::emu::tcgen05 {

namespace {

// One tcgen05.ld / st of a warp: its address, shape, and the columns it spans.
struct Access {
  Shape shape;
  bool pack;
  std::uint32_t nregs, lane0, col0, split;
  std::uint32_t lanes() const { return shape == S32x32b ? 32 : 16; }
  // Columns one access spans (each half of .16x32bx2): 32 or 16 lanes times that many 32-bit
  // columns hold the warp's 32 * nregs registers (16 * nregs per half of .16x32bx2).
  std::uint32_t width() const { return (shape == S32x32b || shape == S16x32bx2 ? nregs : 2 * nregs) * (pack ? 2 : 1); }
  int halves() const { return shape == S16x32bx2 ? 2 : 1; }
  std::uint32_t half_col(int h) const { return col0 + (h ? split : 0); }
};

struct Place {
  std::uint32_t lane, col;  // with .pack::16b, col is the first of the pair
};

// Thread t's register r: the rules of the header comment.
Place place(const Access& a, std::uint32_t t, std::uint32_t r) {
  std::uint32_t lane = 0, col = 0;
  switch (a.shape) {
    case S32x32b: lane = t; col = r; break;
    case S16x64b: lane = t / 4 + 8 * (t % 2); col = 2 * r + (t / 2) % 2; break;
    case S16x128b: lane = t / 4 + 8 * (r % 2); col = 4 * (r / 2) + t % 4; break;
    case S16x256b: lane = t / 4 + 8 * ((r / 2) % 2); col = 8 * (r / 4) + 2 * (t % 4) + r % 2; break;
    case S16x32bx2: lane = t % 16; col = r; break;
  }
  if (a.pack) col *= 2;
  return {a.lane0 + lane, a.half_col(a.shape == S16x32bx2 && t >= 16 ? 1 : 0) + col};
}

// The warp's access, checked: one address for all lanes; the warp's quarter of the lanes (warp w
// accesses lanes 32 * (w % 4) .. + 31: "Access restrictions" of tensor memory); inside tensor
// memory; columns allocated by this CTA; no in-flight MMA writing them.
Access access_of(Warp& w, const Insn& in, const ptx::Operand& addr_op, std::uint32_t mask, const char* what) {
  Launch& L = w.launch();
  const int l0 = __builtin_ctz(mask);
  const std::uint32_t a = static_cast<std::uint32_t>(operand_address(w, in, addr_op, l0));
  EMU_FOR_LANES(mask, l)
  if (static_cast<std::uint32_t>(operand_address(w, in, addr_op, l)) != a)
    L.fault(ReportKind::TmemMisuse, where(w, in, l), std::string(what) + ": the lanes of the warp give different tensor memory addresses");
  Access acc{static_cast<Shape>(in.imm[1]), (in.flags & Pack16) != 0, static_cast<std::uint32_t>(in.imm[0]), tmem_lane(a), tmem_column(a),
             static_cast<std::uint32_t>(in.imm[2])};
  const std::uint32_t quarter = 32u * (static_cast<std::uint32_t>(w.index) % 4), lane_hi = acc.lane0 + acc.lanes();
  if (acc.lane0 < quarter || lane_hi > quarter + 32)
    L.report(ReportKind::TmemMisuse, where(w, in, l0),
             std::string(what) + " at tensor memory lanes " + cols(acc.lane0, lane_hi) + " by warp " + std::to_string(w.index) +
                 ", which may access lanes " + cols(quarter, quarter + 32) + " only");
  for (int h = 0; h < acc.halves(); ++h) {
    const std::uint32_t c = acc.half_col(h);
    if (lane_hi > TensorMemory::kLanes || c + acc.width() > TensorMemory::kColumns)
      L.fault(ReportKind::OutOfBounds, where(w, in, l0), std::string(what) + " beyond the 128 lanes x 512 columns of tensor memory");
    if (!tmem_of(*w.cta).held_by(c, acc.width(), w.cta))
      L.report(ReportKind::TmemMisuse, where(w, in, l0),
               std::string(what) + " of tensor memory columns " + cols(c, c + acc.width()) + " not all allocated by this CTA");
    check_mma_writes(w, in, l0, *w.cta, acc.lane0, lane_hi, c, c + acc.width(),
                     in.op == Ld ? "tcgen05.ld reads" : "tcgen05.st writes");
  }
  return acc;
}

}  // namespace

Flow tcgen05_ldst(Warp& w, const Insn& in, std::uint32_t mask) {
  TensorMemory& tm = tmem_of(*w.cta);
  if (in.op == Ld) {
    const ptx::Operand& regs = in.operand(0);
    const Access a = access_of(w, in, in.operand(1), mask, "tcgen05.ld");
    for (std::uint32_t r = 0; r < a.nregs; ++r) {
      const int slot = regs.elems[r].reg;
      std::vector<std::uint32_t> v(32, 0xFFFFFFFFu);
      EMU_FOR_LANES(mask, l) {
        const Place p = place(a, static_cast<std::uint32_t>(l), r);
        v[l] = a.pack ? (tm.cell(p.lane, p.col) & 0xFFFFu) | (tm.cell(p.lane, p.col + 1) << 16) : tm.cell(p.lane, p.col);
        w.reg(slot, l) = 0xFFFFFFFFu;  // NaN until tcgen05.wait::ld
      }
      w.tmem_pending[slot] = 1;
      w.tmem_loads.emplace_back(slot, std::move(v));
    }
    return Flow::Next;
  }
  const ptx::Operand& regs = in.operand(in.operand_count() - 1);
  const Access a = access_of(w, in, in.operand(0), mask, "tcgen05.st");
  for (std::uint32_t r = 0; r < a.nregs; ++r)
    EMU_FOR_LANES(mask, l) {
      const Place p = place(a, static_cast<std::uint32_t>(l), r);
      const auto x = static_cast<std::uint32_t>(read_operand(w, in, regs.elems[r], l));
      if (!a.pack) {
        tm.cell(p.lane, p.col) = x;
      } else {
        tm.cell(p.lane, p.col) = 0xFFFF0000u | (x & 0xFFFFu);
        tm.cell(p.lane, p.col + 1) = 0xFFFF0000u | (x >> 16);
      }
    }
  return Flow::Next;
}

Flow tcgen05_wait(Warp& w, const Insn& in, std::uint32_t mask) {
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

}  // namespace mgpu::emu::tcgen05
