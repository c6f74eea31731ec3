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
  bool global = false;        // global memory (named .global, or a generic address there)
  std::uint64_t addr = 0;     // global memory only: the address
};
// `data`, for a write, is what it will store (when known): the race detector compares it with
// the bytes there (check/race_detector.h, RaceDetector::Write). `order`: the access's memory
// order bits (check/memory_order.h, order_bits; 0 for a weak access); `also_read`: a write that
// reads too (atom). Shared and global accesses are checked for races when the launch detects
// them (global ones by check/memory_model.h).
Resolved resolve(Warp& w, const Insn& in, Space space, std::uint64_t addr, std::uint32_t bytes, bool write, int lane,
                 const std::uint8_t* data = nullptr, std::uint16_t order = 0, bool also_read = false);
// resolve() in two halves, for an access that knows whether it writes only once it has read
// (atom.cas): where the bytes are (the same faults), then the access recorded. `atomic`: an atom
// or red, whose write continues observation order from the value it read (8.9.2).
Resolved locate(Warp& w, const Insn& in, Space space, std::uint64_t addr, std::uint32_t bytes, bool write, int lane);
void record(Warp& w, const Insn& in, const Resolved& r, std::uint32_t bytes, bool write, int lane, const std::uint8_t* data = nullptr,
            std::uint16_t order = 0, bool also_read = false, bool atomic = false);
// An ld.global.nc of `bytes` at `r` by `lane`: PTX ISA 8.1, "The memory consistency model does
// not apply to texture (including ld.global.nc)" -- the non-coherent path may return bytes from
// before a write of this launch, whatever orders it; so reading bytes written in the launch
// that way is a finding (non-coherent-read; with the race detector on).
void note_non_coherent_read(Warp& w, const Insn& in, int lane, const Resolved& r, std::uint32_t bytes);

// Synchronization through the location `r` of a strong ld/st/atom/red of `bytes` just made by
// `lane` (check/memory_model.h: release and acquire patterns): the read part (`reads`; not for
// red), then the write part (`rmw` for atom/red: the release sequence goes on; a failed
// atom.cas does not write). A lane never acquires what another lane of the same instruction
// released (their order is unspecified).
void memory_sync(Warp& w, const Resolved& r, int lane, std::uint32_t bytes, const MemOrder& o, bool reads, bool writes, bool rmw);
// A memory fence (fence.sc / fence.acq_rel / fence.acquire / fence.release / membar) by `lane`.
void memory_fence(Warp& w, int lane, Scope scope, bool acquire, bool release, bool sc);

// Who made an earlier global access the memory model remembers (`serial`, `slot`: the cluster
// and the thread slot of its race detector), as reports name it; and a global conflict reported
// as `kind` at `at`, `what` describing the access that found it.
std::string memory_thread_name(const Launch& L, std::uint32_t serial, int slot, int pc);
void report_memory_conflict(Launch& L, const Where& at, const std::string& what, const MemoryModel::Conflict& c);

// Shared address (shared::cluster form) -> CTA and offset, or a fault.
Cta& shared_target(Warp& w, const Insn& in, std::uint32_t cluster_addr, std::uint32_t bytes, int lane, std::uint32_t& offset);

// Shadow bookkeeping of a thread's generic-proxy shared-memory write / read.
void note_generic_write(Warp& w, const Insn& in, Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane,
                        const std::uint8_t* data = nullptr, std::uint16_t order = 0);
void note_generic_read(Warp& w, const Insn& in, Cta& cta, std::uint32_t offset, std::uint32_t bytes, int lane, std::uint16_t order = 0);

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
