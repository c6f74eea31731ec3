// tcgen05.ld / st .32x32b.xN and tcgen05.wait::ld / ::st (PTX ISA 9.7.16 "tcgen05.ld",
// "tcgen05.st", "tcgen05.wait"; "Matrix fragments for shape .32x32b": thread t of the warp
// accesses lane base + t, register r column base + r). A load's registers read as NaN, and
// touching them is reported, until wait::ld delivers the values read at issue; a store writes at
// issue.
#include "core/emu/insns/tcgen05.h"

#include "core/emu/exec/access.h"

namespace mgpu::emu::tcgen05 {

namespace {

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

}  // namespace

Flow tcgen05_ldst(Warp& w, const Insn& in, std::uint32_t mask) {
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
