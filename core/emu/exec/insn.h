// A decoded instruction: the PTX instruction plus its meaning bound once (a handler and the
// modifiers it needs), so the interpreter never parses text while running. Contract: a
// handler runs one instruction for the lanes in `mask` (all at this pc) and says what the
// warp does next; it reports faults by throwing Fault (check/report.h).
#pragma once

#include <cstdint>

#include "core/emu/exec/scalar.h"
#include "core/emu/ptx/module.h"

namespace mgpu::emu {

struct Warp;
struct Insn;

enum class Flow : std::uint8_t {
  Next,   // every lane in mask goes to pc + 1
  Done,   // the handler set the lanes' pcs itself (branches)
  Block,  // the lanes wait at this pc; the handler recorded why (Warp::wait)
};

using Handler = Flow (*)(Warp& w, const Insn& in, std::uint32_t mask);

// State spaces named by an instruction (PTX ISA 5.1).
enum class Space : std::uint8_t { Generic, Global, Shared, SharedCluster, Param, Local, Const };

struct Insn {
  Handler fn = nullptr;
  const ptx::Instruction* src = nullptr;
  Ty type = Ty::None, type2 = Ty::None;  // e.g. cvt: type = destination, type2 = source
  Space space = Space::Generic;
  std::uint8_t op = 0;       // family-specific sub-operation (compare, rounding, ...)
  std::uint8_t vec = 1;      // ld/st vector width
  bool aligned = false;      // .aligned: the whole warp must execute it together
  std::uint32_t flags = 0;   // family-specific modifier bits
  std::int32_t imm[6] = {0, 0, 0, 0, 0, 0};  // family-specific decoded constants

  const ptx::Operand& operand(std::size_t i) const { return src->operands[i]; }
  std::size_t operand_count() const { return src->operands.size(); }
  int line() const { return src->line; }
};

}  // namespace mgpu::emu
