#include "core/emu/check/bank_conflicts.h"

#include <algorithm>
#include <map>

namespace mgpu::emu {

namespace {

// Rule 4 for one phase: the lanes in `lanes` each touch `words` consecutive 32-bit words.
std::uint32_t phase_wavefronts(const std::uint32_t* offset, std::uint32_t lanes, std::uint32_t words) {
  // Fast path, one step per lane: no bank asked for two different words (conflict-free, or
  // broadcast). Up to 16 bytes, an access is aligned to its size (resolve() faults otherwise),
  // so a lane's words fill the bank block [bank, bank + words), and two lanes' blocks are the
  // same or disjoint: the block's first word tells whether they are the same words.
  if (words <= 4 && (words & (words - 1)) == 0) {
    std::uint32_t seen = 0, first_of[32];
    bool conflict = false;
    for (std::uint32_t m = lanes; m; m &= m - 1) {
      const std::uint32_t first = offset[__builtin_ctz(m)] / 4, bank = first % 32;
      const std::uint32_t block = ((1u << words) - 1) << bank;
      if (!(seen & block)) { seen |= block; first_of[bank] = first; }
      else if (first_of[bank] != first) { conflict = true; break; }
    }
    if (!conflict) return 1;
  }
  // Distinct words per bank: each word a phase touches (at most 32: 32 lanes x 1, 16 x 2,
  // 8 x 4, ...) goes once into a 64-slot open-addressing set; a new one counts for its bank.
  constexpr std::uint32_t kEmpty = ~0u;  // no word: offsets are below 2^32, words below 2^30
  std::uint32_t slot[64];
  std::fill(slot, slot + 64, kEmpty);
  std::uint8_t per_bank[32] = {};
  std::uint32_t most = 0;
  for (std::uint32_t m = lanes; m; m &= m - 1) {
    const std::uint32_t first = offset[__builtin_ctz(m)] / 4;
    for (std::uint32_t k = 0; k < words; ++k) {
      const std::uint32_t word = first + k;
      std::uint32_t h = (word * 0x9E3779B1u) >> 26;
      while (slot[h] != kEmpty && slot[h] != word) h = (h + 1) & 63;
      if (slot[h] == word) continue;
      slot[h] = word;
      most = std::max<std::uint32_t>(most, ++per_bank[word % 32]);
    }
  }
  return most;
}

}  // namespace

BankCount bank_wavefronts(const std::uint32_t* offset, std::uint32_t lanes, std::uint32_t bytes) {
  const std::uint32_t words = bytes <= 4 ? 1 : bytes / 4;
  const std::uint32_t per_phase = std::max<std::uint32_t>(32 / words, 1);
  const std::uint32_t phase_mask = per_phase >= 32 ? ~0u : (1u << per_phase) - 1;
  BankCount c;
  for (std::uint32_t base = 0; base < 32; base += per_phase) {
    const std::uint32_t m = lanes & (phase_mask << base);
    if (!m) continue;
    ++c.ideal;
    c.wavefronts += phase_wavefronts(offset, m, words);
  }
  return c;
}

BankReport bank_report(const std::vector<BankTally>& by_pc, const std::vector<Insn>& code, const ptx::Kernel& kernel) {
  BankReport r;
  // Label regions: instruction index -> label, the nearest at or before a pc names its region.
  std::map<std::int32_t, std::string> starts;
  for (const auto& [name, target] : kernel.labels) starts.emplace(target, name);  // first name of a shared target wins
  std::map<int, BankLine> lines;
  std::vector<BankRegion> regions;
  for (std::size_t pc = 0; pc < by_pc.size() && pc < code.size(); ++pc) {
    const BankTally& t = by_pc[pc];
    if (!t.accesses) continue;
    r.total.add(t);
    auto it = starts.upper_bound(static_cast<std::int32_t>(pc));
    std::string region = it == starts.begin() ? "(entry)" : std::prev(it)->second;
    BankLine& l = lines[code[pc].line()];
    l.line = code[pc].line();
    l.region = region;
    l.tally.add(t);
    if (regions.empty() || regions.back().label != region) regions.push_back({region, {}});
    regions.back().tally.add(t);
  }
  for (auto& [line, l] : lines) r.lines.push_back(std::move(l));
  r.regions = std::move(regions);
  return r;
}

}  // namespace mgpu::emu
