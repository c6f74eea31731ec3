// Operand and memory access for handlers: registers (with the wgmma in-flight check), special
// registers, immediates, symbols, and loads/stores through the state spaces with bounds,
// alignment and shadow bookkeeping. Contract: an access the GPU would fault on throws Fault
// naming the instruction, thread and address; hazards are reported and the access proceeds.
#pragma once

#include <cstdint>

#include "core/emu/exec/state.h"

namespace mgpu::emu {

#define EMU_FOR_LANES(mask, lane) \
  for (std::uint32_t _m_##lane = (mask); _m_##lane; _m_##lane &= _m_##lane - 1) \
    if (const int lane = __builtin_ctz(_m_##lane); true)

std::uint64_t read_operand(Warp& w, const Insn& in, const ptx::Operand& op, int lane);
void write_operand(Warp& w, const Insn& in, const ptx::Operand& op, int lane, std::uint64_t bits, Ty ty);
inline std::uint64_t src(Warp& w, const Insn& in, std::size_t i, int lane) { return read_operand(w, in, in.operand(i), lane); }
inline void dst(Warp& w, const Insn& in, std::size_t i, int lane, std::uint64_t bits) { write_operand(w, in, in.operand(i), lane, bits, in.type); }

// The address an address operand names in `space` ([reg+imm], [symbol+imm], [imm]).
std::uint64_t operand_address(Warp& w, const Insn& in, const ptx::Operand& op, int lane);

// Bytes of memory in `space` at `addr` for this lane; faults when out of bounds. For shared
// memory, `cta` receives the CTA whose memory it is and `offset` the shared offset.
struct Resolved {
  std::uint8_t* ptr = nullptr;
  Cta* cta = nullptr;         // shared memory only
  std::uint32_t offset = 0;   // shared memory only
};
// `data`, for a write, is what it will store (when known): the race detector compares it with
// the bytes there (check/race_detector.h, RaceDetector::Write).
Resolved resolve(Warp& w, const Insn& in, Space space, std::uint64_t addr, std::uint32_t bytes, bool write, int lane,
                 const std::uint8_t* data = nullptr);

// Shared address (shared::cluster form) -> CTA and offset, or a fault.
Cta& shared_target(Warp& w, const Insn& in, std::uint32_t cluster_addr, std::uint32_t bytes, int lane, std::uint32_t& offset);

// Shadow bookkeeping of a thread's generic-proxy shared-memory write / read.
void note_generic_write(Warp& w, const Insn& in, Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane,
                        const std::uint8_t* data = nullptr);
void note_generic_read(Warp& w, const Insn& in, Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane);

// The lanes of one warp-wide ld/st/atom/red that land in the executing CTA's shared memory,
// gathered while the handler runs its lanes, then counted once for bank conflicts
// (check/bank_conflicts.h). Another CTA's shared memory is reached over the cluster network,
// not through this SM's banks, so those lanes are left out.
struct SharedLanes {
  std::uint32_t lanes = 0;
  std::uint32_t offset[32];
  void add(const Warp& w, const Resolved& r, int lane) {
    if (r.cta != w.cta) return;
    lanes |= 1u << lane;
    offset[lane] = r.offset;
  }
};
// Adds the access (`bytes` per lane) to the launch's per-instruction bank tally; none when no lane landed.
void count_banks(Warp& w, const Insn& in, const SharedLanes& s, std::uint32_t bytes);

Where where(const Warp& w, const Insn& in, int lane);

}  // namespace mgpu::emu
