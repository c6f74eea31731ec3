// Warp-level collectives (PTX ISA 9.7.9.x shfl.sync, 9.7.12.x vote.sync, elect.sync,
// activemask, bar.warp.sync). The lanes of membermask reconverge first (gather), so a
// collective sees every member's operands. None of these orders memory between its lanes: they
// "wait until all non-exited threads corresponding to membermask have executed" it, nothing more
// (unlike bar.warp.sync, 9.7.13.2), and the warp is not a scope (8.5) -- so lanes that learn a
// flag from the lane that acquired it through shfl.sync still race on the data behind it.
#include <cstdio>

#include "core/emu/exec/access.h"
#include "core/emu/exec/decode.h"
#include "core/emu/exec/interpreter.h"

namespace mgpu::emu {
namespace {

enum ShflMode : std::uint8_t { Up, Down, Bfly, Idx };

// The membermask operand. PTX ISA (shfl.sync, vote.sync, elect.sync): "the behavior is
// undefined if the executing thread is not in the membermask" -- a fault, not a guess.
std::uint32_t members(Warp& w, const Insn& in, std::size_t i, std::uint32_t mask) {
  std::uint32_t mm = static_cast<std::uint32_t>(src(w, in, i, __builtin_ctz(mask)));
  if (std::uint32_t outside = mask & ~mm) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "lanes 0x%08x execute it outside its membermask 0x%08x", outside, mm);
    w.launch().fault(ReportKind::NotConverged, where(w, in, __builtin_ctz(outside)), "'" + in.src->opcode + "': " + buf);
  }
  return mm;
}

// The lane a shfl.sync reads must execute it with the reader (PTX ISA, shfl.sync: "results
// are undefined if a thread sources a register from an inactive thread or a thread that is not
// in membermask"; the pseudocode leaves SourceA unpredictable for inactive and predicated-off
// threads). `mask` holds exactly the lanes executing it, so any other source is a fault.
void check_source(Warp& w, const Insn& in, std::uint32_t mask, std::uint32_t mm, int lane, int j) {
  if ((mask >> j) & 1) return;
  const char* why = !((w.alive >> j) & 1) ? "which has exited"
                    : !((mm >> j) & 1)     ? "which is not in membermask"
                                           : "which does not execute it (predicated off)";
  char buf[160];
  std::snprintf(buf, sizeof buf, "lane %d reads lane %d, %s (membermask 0x%08x): the value is undefined", lane, j, why, mm);
  w.launch().fault(ReportKind::NotConverged, where(w, in, lane), "'" + in.src->opcode + "': " + buf);
}

// shfl.sync: PTX ISA 9.7.9.7 (the pseudocode of lane, minLane, maxLane, pval).
Flow shfl(Warp& w, const Insn& in, std::uint32_t mask) {
  std::uint32_t mm = members(w, in, 4, mask);
  if (!gather(w, mask, mm)) return Flow::Block;
  std::uint64_t a[32];
  EMU_FOR_LANES(mask, l) a[l] = src(w, in, 1, l);
  const ptx::Operand& d = in.operand(0);
  EMU_FOR_LANES(mask, l) {
    std::uint32_t b = static_cast<std::uint32_t>(src(w, in, 2, l)) & 0x1F;
    std::uint32_t c = static_cast<std::uint32_t>(src(w, in, 3, l));
    std::uint32_t seg = (c >> 8) & 0x1F, cval = c & 0x1F;
    int lane = l;
    int max_lane = static_cast<int>((lane & seg) | (cval & ~seg)), min_lane = static_cast<int>(lane & seg);
    int j = lane;
    bool p = false;
    switch (in.op) {
      case Up: j = lane - static_cast<int>(b); p = j >= max_lane; break;
      case Down: j = lane + static_cast<int>(b); p = j <= max_lane; break;
      case Bfly: j = lane ^ static_cast<int>(b); p = j <= max_lane; break;
      case Idx: j = min_lane | static_cast<int>(b & ~seg); p = j <= max_lane; break;
    }
    if (!p || j < 0 || j > 31) j = lane;
    check_source(w, in, mask, mm, lane, j);
    std::uint64_t v = a[j];
    if (d.kind == ptx::Operand::Kind::Vector) {
      write_operand(w, in, d.elems[0], l, v, Ty::B32);
      write_operand(w, in, d.elems[1], l, p, Ty::Pred);
    } else {
      write_operand(w, in, d, l, v, Ty::B32);
    }
  }
  return Flow::Next;
}

std::string decode_shfl(const ptx::Instruction& p, Insn& out) {
  if (!has_part(p, "sync")) return "shfl without .sync (removed in PTX 6.4 for sm_70+)";
  out.op = has_part(p, "up") ? Up : has_part(p, "down") ? Down : has_part(p, "bfly") ? Bfly : Idx;
  if (p.operands.size() != 5) return "expected d, a, b, c, membermask";
  out.fn = &shfl;
  return "";
}

// elect.sync d|p, membermask: PTX ISA 9.7.12.x -- one leader among the members.
Flow elect(Warp& w, const Insn& in, std::uint32_t mask) {
  std::uint32_t mm = members(w, in, 1, mask);
  if (!gather(w, mask, mm)) return Flow::Block;
  std::uint32_t cand = mask & mm;
  int leader = cand ? __builtin_ctz(cand) : -1;
  const ptx::Operand& d = in.operand(0);
  EMU_FOR_LANES(mask, l) {
    if (d.kind == ptx::Operand::Kind::Vector) {
      write_operand(w, in, d.elems[0], l, static_cast<std::uint64_t>(leader), Ty::B32);
      write_operand(w, in, d.elems[1], l, l == leader, Ty::Pred);
    } else {
      write_operand(w, in, d, l, l == leader, Ty::Pred);
    }
  }
  return Flow::Next;
}

std::string decode_elect(const ptx::Instruction& p, Insn& out) {
  if (p.operands.size() != 2) return "expected d|p, membermask";
  out.fn = &elect;
  return "";
}

enum VoteMode : std::uint8_t { All, Any, Uni, Ballot };

Flow vote(Warp& w, const Insn& in, std::uint32_t mask) {
  std::uint32_t mm = members(w, in, 2, mask);
  if (!gather(w, mask, mm)) return Flow::Block;
  std::uint32_t ballot = 0;
  EMU_FOR_LANES(mask, l) if (src(w, in, 1, l) & 1) ballot |= 1u << l;
  std::uint32_t act = mask & mm;
  EMU_FOR_LANES(mask, l) {
    std::uint64_t r = 0;
    switch (in.op) {
      case All: r = (ballot & act) == act; break;
      case Any: r = (ballot & act) != 0; break;
      case Uni: r = (ballot & act) == act || (ballot & act) == 0; break;
      case Ballot: r = ballot & act; break;
    }
    dst(w, in, 0, l, r);
  }
  return Flow::Next;
}

std::string decode_vote(const ptx::Instruction& p, Insn& out) {
  if (!has_part(p, "sync")) return "vote without .sync";
  out.op = has_part(p, "all") ? All : has_part(p, "any") ? Any : has_part(p, "uni") ? Uni : Ballot;
  out.type = out.op == Ballot ? Ty::B32 : Ty::Pred;
  out.fn = &vote;
  return "";
}

Flow activemask(Warp& w, const Insn& in, std::uint32_t mask) {
  EMU_FOR_LANES(mask, l) dst(w, in, 0, l, mask);
  return Flow::Next;
}

}  // namespace

void register_warp() {
  register_decoder("shfl", &decode_shfl);
  register_decoder("elect", &decode_elect);
  register_decoder("vote", &decode_vote);
  register_decoder("activemask", [](const ptx::Instruction&, Insn& out) -> std::string {
    out.type = Ty::B32;
    out.fn = &activemask;
    return "";
  });
}

}  // namespace mgpu::emu
