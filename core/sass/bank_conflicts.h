// Shared-memory bank conflicts as a verification on the virtual device reports them (issue 19):
// the counts of core/emu/check/bank_conflicts.h, kept in the verification's stored message.
// Contract: bank_conflict_text() is the message's phrase, "N extra wavefronts in A accesses
// (W wavefronts, ideal I)"; parse_bank_conflicts() finds it in a message written by any
// version (records before 2026-11-23 lack the parenthesis: the ideal is then taken as one
// wavefront per access, which the <= 4-byte stores the templates stage with need) and returns
// nullopt when the message has no count or counts no conflicts (every verification keeps a
// clean count too since 2026-11-23). ways() = wavefronts / ideal (1: conflict-free).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mgpu::core {

struct SharedBankConflicts {
  std::int64_t conflicts = 0;  // wavefronts beyond the ideal
  std::int64_t accesses = 0;   // warp-wide shared accesses counted
  std::int64_t wavefronts = 0, ideal = 0;
  double ways() const { return ideal > 0 ? double(wavefronts) / double(ideal) : 1.0; }
};

std::string bank_conflict_text(const SharedBankConflicts& b);
std::optional<SharedBankConflicts> parse_bank_conflicts(std::string_view message);

}  // namespace mgpu::core
