#include "core/sass/sass_profile.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

namespace mgpu::core {
namespace {

struct Instruction {
  std::string opcode;  // with modifiers, without the predicate
  std::string branch_target;  // label of a BRA, else empty
  bool predicated = false;
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void count(SassCounts& c, const std::string& op) {
  ++c.instructions;
  if (starts_with(op, "HGMMA") || (starts_with(op, "UTC") && op.find("MMA") != std::string::npos)) ++c.mma;
  else if (starts_with(op, "UTMA") || starts_with(op, "UBLKCP")) ++c.tma;
  else if (starts_with(op, "SYNCS") || starts_with(op, "BAR.") || op == "BAR") ++c.sync;
  else if (starts_with(op, "WARPGROUP.ARRIVE") || starts_with(op, "WARPGROUP.DEPBAR")) ++c.warpgroup_sync;
  else if (op == "LDL" || op == "STL" || starts_with(op, "LDL.") || starts_with(op, "STL.")) ++c.local_memory;
  else if (starts_with(op, "USETMAXREG")) ++c.setmaxnreg;
  else if (starts_with(op, "STS")) ++c.shared_store;  // STS.*, STSM.*
  else if (starts_with(op, "MEMBAR") && op.find(".CTA") == std::string::npos) ++c.wide_membar;
}

// "USETMAXREG.TRY_ALLOC.CTAPOOL UP1, 0xe8" -> raise to 232; ".DEALLOC.CTAPOOL 0x28" -> release to 40.
RegisterBudget budget_of(const std::string& op, const std::string& operands) {
  static const std::regex imm(R"((0x[0-9a-f]+|\b[0-9]+)\s*$)");
  RegisterBudget b;
  b.raise = op.find("ALLOC") != std::string::npos && op.find("DEALLOC") == std::string::npos;
  std::smatch m;
  if (std::regex_search(operands, m, imm)) b.registers = static_cast<int>(std::stoul(m[1], nullptr, 0));
  return b;
}

}  // namespace

SassProfile profile_sass(std::string_view text, std::string_view wanted) {
  // nvdisasm -c: "        /*1cb0*/   @!P0 HGMMA.64x128x16.F32.BF16 R24, ... ;" and labels ".L_x_7:".
  static const std::regex instr(R"(^\s*/\*[0-9a-f]+\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);)");
  static const std::regex label(R"(^(\.L_x_[0-9]+):)");
  static const std::regex bra(R"(`\((\.L_x_[0-9]+)\))");
  static const std::regex function(R"(^\s*\.global\s+(\S+))");
  SassProfile p;
  std::vector<Instruction> code;
  std::map<std::string, std::size_t> label_at;  // label -> index of the next instruction
  std::istringstream in{std::string(text)};
  std::string line;
  // A listing holds one function after another; `inside` is true in the one profiled.
  bool inside = wanted.empty();
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, function)) {
      if (!p.function.empty()) break;  // the function profiled has ended
      inside = wanted.empty() || m[1].str() == wanted;
      if (inside) p.function = m[1];
      continue;
    }
    if (!inside) continue;
    if (std::regex_search(line, m, label)) label_at[m[1]] = code.size();
    else if (std::regex_search(line, m, instr)) {
      Instruction i{m[2], "", m[1].matched};
      std::string rest = m[3];
      if (starts_with(i.opcode, "USETMAXREG")) p.register_budgets.push_back(budget_of(i.opcode, rest));
      std::smatch t;
      if (starts_with(i.opcode, "BRA") && std::regex_search(rest, t, bra)) i.branch_target = t[1];
      code.push_back(std::move(i));
    }
  }
  for (const Instruction& i : code) count(p.whole, i.opcode);

  // Loops: a branch back to a label at or before it. The main loop is the shortest that holds an
  // MMA. A span with an EXIT every thread takes is no loop: it is an out-of-line wait retry,
  // placed after the kernel's exit, branching back into the body (the attention kernel's
  // mbarrier try-waits made such a false 'main loop' of half its real one).
  std::size_t best_begin = 0, best_end = 0;
  for (std::size_t at = 0; at < code.size(); ++at) {
    if (code[at].branch_target.empty()) continue;
    auto l = label_at.find(code[at].branch_target);
    if (l == label_at.end() || l->second > at) continue;
    std::size_t begin = l->second, end = at + 1;
    if (std::any_of(code.begin() + begin, code.begin() + end,
                    [](const Instruction& i) { return starts_with(i.opcode, "EXIT") && !i.predicated; }))
      continue;
    bool has_mma = std::any_of(code.begin() + begin, code.begin() + end, [](const Instruction& i) {
      SassCounts c;
      count(c, i.opcode);
      return c.mma > 0;
    });
    if (has_mma && (!p.has_main_loop || end - begin < best_end - best_begin)) {
      p.has_main_loop = true;
      best_begin = begin;
      best_end = end;
    }
  }
  if (!p.has_main_loop) return p;
  for (std::size_t at = best_begin; at < best_end; ++at) count(p.main_loop, code[at].opcode);

  // The epilogue: from the main loop's end to the first EXIT every thread takes (else the
  // function's end). Out-of-line wait retries sit after that EXIT.
  std::size_t end = code.size();
  for (std::size_t at = best_end; at < code.size(); ++at)
    if (starts_with(code[at].opcode, "EXIT") && !code[at].predicated) {
      end = at + 1;
      break;
    }
  for (std::size_t at = best_end; at < end; ++at) count(p.epilogue, code[at].opcode);
  p.has_epilogue = end > best_end;
  return p;
}

std::vector<std::string> assembler_advisories(std::string_view log) {
  static const std::regex code(R"(\((C[0-9]{4})\))");
  std::vector<std::string> out;
  std::string s(log);
  for (std::sregex_iterator it(s.begin(), s.end(), code), end; it != end; ++it)
    if (std::find(out.begin(), out.end(), (*it)[1].str()) == out.end()) out.push_back((*it)[1]);
  return out;
}

}  // namespace mgpu::core
