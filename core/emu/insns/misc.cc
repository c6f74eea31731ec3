// Miscellaneous instructions: setmaxnreg (PTX ISA 9.7.19.x: a warpgroup changes its
// per-thread register count; .inc waits until the SM's 64K-register file has room),
// getctarank (9.7.9.x), nanosleep, griddepcontrol and pmevent (no effect on results).
#include "core/emu/exec/access.h"
#include "core/emu/exec/address.h"
#include "core/emu/exec/decode.h"

namespace mgpu::emu {

void register_compare();
void register_misc_logic();

namespace {

constexpr std::int64_t kRegisterFile = 64 * 1024;

Flow setmaxnreg(Warp& w, const Insn& in, std::uint32_t mask) {
  const int l0 = __builtin_ctz(mask);
  const std::int32_t n = in.imm[0];
  Cta& cta = *w.cta;
  std::int64_t delta = static_cast<std::int64_t>(n - w.maxnreg) * 32;
  if (in.op == 0 && n < w.maxnreg)
    w.launch().fault(ReportKind::RegisterFile, where(w, in, l0), "setmaxnreg.inc to " + std::to_string(n) + " below the warp's current " + std::to_string(w.maxnreg));
  if (in.op == 1 && n > w.maxnreg)
    w.launch().fault(ReportKind::RegisterFile, where(w, in, l0), "setmaxnreg.dec to " + std::to_string(n) + " above the warp's current " + std::to_string(w.maxnreg));
  if (cta.registers_in_use + delta > kRegisterFile) {
    EMU_FOR_LANES(mask, l) w.wait[l] = Wait{Wait::Registers, 0, static_cast<std::uint64_t>(n)};
    return Flow::Block;
  }
  cta.registers_in_use += delta;
  w.maxnreg = n;
  // .sync.aligned over the warpgroup: the i-th setmaxnreg of every warp of it is one instruction.
  auto& log = cta.setmaxnreg_log[static_cast<std::size_t>(w.index / 4)];
  const std::uint32_t pc = static_cast<std::uint32_t>(&in - w.launch().code->data());
  if (w.setmaxnreg_count < log.size()) {
    if (log[w.setmaxnreg_count] != pc)
      w.launch().report(ReportKind::NotConverged, where(w, in, l0),
                        "setmaxnreg #" + std::to_string(w.setmaxnreg_count + 1) + " of warp " + std::to_string(w.index) +
                            " is not the one another warp of warpgroup " + std::to_string(w.index / 4) + " executed (PTX line " +
                            std::to_string((*w.launch().code)[log[w.setmaxnreg_count]].line()) + ")");
  } else {
    log.push_back(pc);
  }
  ++w.setmaxnreg_count;
  return Flow::Next;
}

std::string decode_setmaxnreg(const ptx::Instruction& p, Insn& out) {
  out.aligned = true;
  out.op = has_part(p, "inc") ? 0 : 1;
  if (p.operands.size() != 1 || p.operands[0].kind != ptx::Operand::Kind::Imm) return "expected an immediate register count";
  out.imm[0] = static_cast<std::int32_t>(p.operands[0].imm);
  if (out.imm[0] < 24 || out.imm[0] > 256 || out.imm[0] % 8) return "register count must be a multiple of 8 in [24, 256]";
  out.fn = &setmaxnreg;
  return "";
}

Flow getctarank(Warp& w, const Insn& in, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) {
    std::uint64_t a = src(w, in, 1, l);
    if (in.space == Space::Generic) a -= kSharedWindow;
    int rank = cluster_rank_of(static_cast<std::uint32_t>(a));
    dst(w, in, 0, l, static_cast<std::uint64_t>(rank));
  }
  return Flow::Next;
}

Flow nop(Warp&, const Insn&, std::uint32_t) { return Flow::Next; }

std::string decode_nop(const ptx::Instruction&, Insn& out) {
  out.fn = &nop;
  return "";
}

}  // namespace

bool registers_available(Warp& w, std::int32_t n);
bool registers_available(Warp& w, std::int32_t n) {
  return w.cta->registers_in_use + static_cast<std::int64_t>(n - w.maxnreg) * 32 <= kRegisterFile;
}

// At the exit of `cta`: every warp of a warpgroup ran the same number of setmaxnreg.
void setmaxnreg_exit_check(Launch& L, Cta& cta);
void setmaxnreg_exit_check(Launch& L, Cta& cta) {
  for (std::size_t g = 0; g < cta.setmaxnreg_log.size(); ++g) {
    const std::size_t n = cta.setmaxnreg_log[g].size();
    for (std::size_t i = 4 * g; i < 4 * g + 4 && i < cta.warps.size(); ++i)
      if (cta.warps[i]->setmaxnreg_count != n) {
        const Warp& w = *cta.warps[i];
        L.report(ReportKind::NotConverged, cta.where(&w),
                 "warp " + std::to_string(i) + " executed " + std::to_string(w.setmaxnreg_count) + " setmaxnreg while another warp of warpgroup " +
                     std::to_string(g) + " executed " + std::to_string(n) + ": setmaxnreg is .sync.aligned over the whole warpgroup");
        break;
      }
  }
}

void register_misc() {
  register_compare();
  register_misc_logic();
  register_decoder("setmaxnreg", &decode_setmaxnreg);
  register_decoder("getctarank", [](const ptx::Instruction& p, Insn& out) -> std::string {
    out.space = space_of(p);
    out.type = Ty::U32;
    out.fn = &getctarank;
    return "";
  });
  register_decoder("nanosleep", &decode_nop);
  register_decoder("griddepcontrol", &decode_nop);
  register_decoder("pmevent", &decode_nop);
}

}  // namespace mgpu::emu
