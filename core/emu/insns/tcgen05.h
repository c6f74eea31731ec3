// What the tcgen05 files of insns/ share (tcgen05.cc: the decoder and helpers; tcgen05_alloc.cc,
// tcgen05_mma.cc, tcgen05_ldst.cc: the handlers). Contract: internal to insns/; handlers follow
// exec/insn.h.
#pragma once

#include <cstdint>
#include <string>

#include "core/emu/exec/insn.h"
#include "core/emu/exec/state.h"

namespace mgpu::emu::tcgen05 {

enum Op : std::uint8_t { Alloc, Dealloc, Relinquish, Mma, Commit, Ld, St, WaitLd, WaitSt, Fence };
enum Flag : std::uint32_t { Group2 = 1, Multicast = 2, Pack16 = 4 };  // Pack16: ld .pack::16b / st .unpack::16b
// tcgen05.ld / st data movement shapes (9.7.16.2.3). An Ld / St carries its register count in
// Insn::imm[0], its Shape in imm[1] and .16x32bx2's immHalfSplitoff (columns) in imm[2].
enum Shape : std::uint8_t { S32x32b, S16x64b, S16x128b, S16x256b, S16x32bx2 };

std::string cta_name(const Cta& c);
std::string cols(std::uint32_t lo, std::uint32_t hi);  // "[lo, hi)"
// A shared address operand: shared::cta / shared::cluster, or generic inside the shared window.
std::uint32_t shared_operand(Warp& w, const Insn& in, const ptx::Operand& op, int l);
// Reports (tmem-hazard) an in-flight MMA of the cluster writing tensor memory cells of `cta` in the
// box, or, unless `in` is a tcgen05.ld, reading its A operand from them.
void check_mma_writes(Warp& w, const Insn& in, int l, Cta& cta, std::uint32_t lane_lo, std::uint32_t lane_hi, std::uint32_t c_lo,
                      std::uint32_t c_hi, const char* what);
// "All tcgen05 instructions within a kernel must specify the same value for the .cta_group".
void check_group(Warp& w, const Insn& in, int l);
// The peer CTA of a cta_group::2 instruction, or a fault.
Cta& peer_of(Warp& w, const Insn& in, int l);

Flow tcgen05_alloc(Warp& w, const Insn& in, std::uint32_t mask);   // alloc, dealloc, relinquish_alloc_permit
Flow tcgen05_mma(Warp& w, const Insn& in, std::uint32_t mask);
Flow tcgen05_commit(Warp& w, const Insn& in, std::uint32_t mask);
Flow tcgen05_ldst(Warp& w, const Insn& in, std::uint32_t mask);    // ld, st
Flow tcgen05_wait(Warp& w, const Insn& in, std::uint32_t mask);    // wait::ld, wait::st

}  // namespace mgpu::emu::tcgen05
