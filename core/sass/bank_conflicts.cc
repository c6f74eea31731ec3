#include "core/sass/bank_conflicts.h"

#include <regex>

#include <fmt/format.h>

namespace mgpu::core {

std::string bank_conflict_text(const SharedBankConflicts& b) {
  return fmt::format("{} extra wavefronts in {} accesses ({} wavefronts, ideal {})", b.conflicts, b.accesses,
                     b.wavefronts, b.ideal);
}

std::optional<SharedBankConflicts> parse_bank_conflicts(std::string_view message) {
  static const std::regex re(R"(bank conflicts: (\d+) extra wavefronts in (\d+) accesses( \((\d+) wavefronts, ideal (\d+)\))?)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(message.begin(), message.end(), m, re)) return std::nullopt;
  SharedBankConflicts b;
  b.conflicts = std::stoll(m[1].str());
  b.accesses = std::stoll(m[2].str());
  if (m[3].matched) {
    b.wavefronts = std::stoll(m[4].str());
    b.ideal = std::stoll(m[5].str());
  } else {
    b.ideal = b.accesses;  // older records: one wavefront per access is the ideal of <= 4-byte stores
    b.wavefronts = b.ideal + b.conflicts;
  }
  if (b.conflicts <= 0) return std::nullopt;
  return b;
}

}  // namespace mgpu::core
