// Binding meaning to parsed instructions, once per kernel. Contract: decode() returns one Insn
// per ptx::Instruction or throws Fault{Unsupported} naming the instruction and its PTX line --
// never a silent guess. Families register their opcodes (insns/*.cc), each entry citing the
// PTX ISA section it implements.
#pragma once

#include <string>
#include <vector>

#include "core/emu/exec/insn.h"

namespace mgpu::emu {

// A decoder fills `out` for an instruction of its opcode (parts[0]) or returns an error text
// for a form it does not implement.
using Decoder = std::string (*)(const ptx::Instruction& in, Insn& out);

void register_decoder(const char* opcode, Decoder d);
std::vector<Insn> decode(const ptx::Kernel& k);

// Helpers for decoders.
bool has_part(const ptx::Instruction& in, const char* part);
Ty last_type(const ptx::Instruction& in);  // the last type suffix, Ty::None if none
Space space_of(const ptx::Instruction& in);

// Families (insns/*.cc).
void register_integer(), register_float(), register_convert(), register_data(), register_control(),
    register_warp(), register_barrier(), register_mbarrier(), register_tma(), register_wgmma(), register_tcgen05(), register_misc(),
    register_warp_mma();

}  // namespace mgpu::emu
