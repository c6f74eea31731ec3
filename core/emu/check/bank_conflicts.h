// Shared-memory bank conflicts of warp-wide generic-proxy accesses (ld/st/atom/red on shared
// memory, named .shared or reached through a generic address), counted as Nsight Compute's
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared counts them: the wavefronts an access needs
// beyond the ideal number for its width. Contract: a count, never a report; it changes nothing
// the kernel computes.
//
// Model (sm_70 and later; the device presented is sm_90a / sm_100a):
//  1. 32 banks, 4 bytes wide: bank = (byte offset / 4) % 32.
//  2. Lanes touching the same 32-bit word are served together (reads: broadcast / multicast;
//     writes: one lane's bytes land), whatever their number.
//  3. B bytes per lane are processed in phases of 128 / max(B, 4) lanes: one phase of 32 lanes
//     up to 4 bytes, two half-warps (lanes 0-15, 16-31) for 8 bytes, four quarter-warps for 16;
//     each phase on its own. ideal = phases with an active lane.
//  4. Within a phase, wavefronts = max over banks of the distinct 32-bit words touched in that
//     bank (a lane of B > 4 bytes touches B / 4 consecutive words).
//  conflicts = wavefronts - ideal. Inactive lanes (predicated off, exited, elsewhere in a
//  divergent warp) take no part: the handler sees only the lanes that execute.
//
// Sources, and what each says:
//  - CUDA C++ Programming Guide, "Compute Capability 5.x: Shared Memory" (the section later
//    compute capabilities refer to): 32 banks, successive 32-bit words in successive banks; a
//    request "does not generate a bank conflict between two threads that access any address
//    within the same 32-bit word" -- for reads the word is broadcast, for writes each address
//    is written by only one of the threads. (Rules 1 and 2, loads and stores alike.)
//  - CUDA C++ Best Practices Guide, "Shared Memory and Memory Banks": each bank delivers 32
//    bits per clock; a request with conflicts is split into as many conflict-free requests as
//    needed. (Rule 4: one wavefront per word a bank must deliver.)
//  - NVIDIA developer forum, "What's the difference between wavefronts and sectors/req"
//    (t/165293, an Nsight Compute engineer): a warp's shared instruction is one request to
//    L1TEX, split into wavefronts processed one per cycle when it cannot be served at once.
//  - NVIDIA developer forum, "Unexpected shared memory bank conflict" (t/77228, CC 7.x): the
//    shared-memory return path is 128 bytes per cycle, so LDS.128 needs 4 requests per
//    instruction; GTC 2019 S9593 (cuTENSOR; cited in Dao-AILab/flash-attention#738): 128-bit
//    accesses go in phases of 8 threads and conflict only within a phase. (Rule 3 for 16
//    bytes.) No NVIDIA text we found states the half-warp phases of 8-byte accesses; they are
//    the same 128-bytes-per-wavefront argument (16 lanes x 8 bytes). For Maxwell, S. Gray
//    (NervanaSystems/maxas#8) observed 128-bit accesses conflicting within half-warps; we
//    follow the Volta-and-later sources above.
// Where the sources are silent, our choices:
//  - Stores use the load rules (the guide's same-word rule names both; nothing says store
//    phases differ).
//  - atom/red use the same rules. Hardware must serialize several lanes updating one word;
//    how Nsight counts that is undocumented, so it is not counted.
//  - The CC 7.x packing of uniform-address LDS.128 (t/77228: lane pairs with equal addresses
//    take 2 wavefronts instead of 4) is not modelled: it lowers wavefronts and ideal alike.
//  - Accesses to another CTA's shared memory (shared::cluster, distributed shared memory)
//    travel over the cluster network, not through the executing SM's banks: not counted.
//  - Nsight's counter also includes wavefronts added for reasons other than banks; only the
//    bank-caused ones are counted here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/emu/exec/insn.h"
#include "core/emu/ptx/module.h"

namespace mgpu::emu {

// Wavefronts of one warp-wide access: offset[lane] is the shared byte offset of each lane set
// in `lanes`; `bytes` is what each lane reads or writes.
struct BankCount {
  std::uint32_t wavefronts = 0, ideal = 0;
};
BankCount bank_wavefronts(const std::uint32_t* offset, std::uint32_t lanes, std::uint32_t bytes);

// Sums over warp-accesses (kept per instruction while a launch runs).
struct BankTally {
  std::uint64_t accesses = 0;  // warp-wide accesses counted
  std::uint64_t wavefronts = 0, ideal = 0;
  std::uint64_t conflicts() const { return wavefronts - ideal; }
  void add(const BankTally& o) { accesses += o.accesses; wavefronts += o.wavefronts; ideal += o.ideal; }
};

// A launch's counts: in total, per PTX line, and per label region (the instructions from one
// top-scope label to the next; "(entry)" before the first), lines and regions in PTX order,
// only those with accesses.
struct BankLine {
  int line = 0;
  std::string region;
  BankTally tally;
};
struct BankRegion {
  std::string label;
  BankTally tally;
};
struct BankReport {
  BankTally total;
  std::vector<BankLine> lines;
  std::vector<BankRegion> regions;
};
BankReport bank_report(const std::vector<BankTally>& by_pc, const std::vector<Insn>& code, const ptx::Kernel& kernel);

}  // namespace mgpu::emu
