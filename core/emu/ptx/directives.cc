#include "core/emu/ptx/directives.h"

#include <utility>

namespace mgpu::emu::ptx {
namespace {

struct EmulatedTarget {
  const char* name;
  int min_major, min_minor;  // the first PTX ISA with this target (PTX ISA release notes)
};
// The arch-specific targets the device presents, and the plain targets a driver JIT-compiles for
// a newer GPU (PTX for sm_80 runs on an H100; LLVM's own MLIR CUDA tests are written for sm_70
// and sm_80), each with the first PTX ISA that has it.
constexpr EmulatedTarget kEmulatedTargets[] = {
    {"sm_90a", 8, 0}, {"sm_100a", 8, 6}, {"sm_100", 8, 6}, {"sm_90", 7, 8}, {"sm_89", 7, 8}, {"sm_87", 7, 4},
    {"sm_86", 7, 1},  {"sm_80", 7, 0},   {"sm_75", 6, 3},  {"sm_72", 6, 1}, {"sm_70", 6, 0}, {"sm_62", 5, 0},
    {"sm_61", 5, 0},  {"sm_60", 5, 0},   {"sm_53", 4, 2},  {"sm_52", 4, 1}, {"sm_50", 4, 0}};
constexpr int kNewestMajor = 9, kNewestMinor = 0;
constexpr const char* kTargets = "sm_90a and sm_100a, and the plain targets up to sm_100 that a driver JIT-compiles "
                                 "for them (sm_50 .. sm_90, sm_100)";

std::string newest() { return std::to_string(kNewestMajor) + "." + std::to_string(kNewestMinor); }

}  // namespace

std::optional<DirectiveProblem> check_directives(const Module& m) {
  if (m.version.empty())
    return DirectiveProblem{true, "no .version directive (PTX starts with one, e.g. .version 8.0; the virtual device "
                                  "reads PTX ISA up to " + newest() + ")"};
  int major = -1, minor = -1;
  const std::size_t dot = m.version.find('.');
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 3 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot != std::string::npos && digits(m.version.substr(0, dot)) && digits(m.version.substr(dot + 1))) {
    major = std::stoi(m.version.substr(0, dot));
    minor = std::stoi(m.version.substr(dot + 1));
  }
  if (major < 0) return DirectiveProblem{true, ".version " + m.version + " is no PTX ISA version (one like 8.0)"};
  if (std::pair{major, minor} > std::pair{kNewestMajor, kNewestMinor})
    return DirectiveProblem{true, ".version " + m.version + " is newer than the virtual device implements: it reads PTX ISA up to " +
                                      newest()};
  if (m.target.empty()) return DirectiveProblem{false, std::string("no .target directive: the virtual device implements ") + kTargets};
  const EmulatedTarget* target = nullptr;
  for (const EmulatedTarget& t : kEmulatedTargets)
    if (m.target == t.name) target = &t;
  if (!target)
    return DirectiveProblem{false, ".target " + m.target + " is not a target the virtual device implements: it implements " +
                                       kTargets + " (a module for another GPU would run as sm_90a, and its verdict would say "
                                       "nothing of that GPU)"};
  if (std::pair{major, minor} < std::pair{target->min_major, target->min_minor})
    return DirectiveProblem{true, ".version " + m.version + " has no .target " + m.target + ": that target needs PTX ISA " +
                                      std::to_string(target->min_major) + "." + std::to_string(target->min_minor) + " or later"};
  return std::nullopt;
}

}  // namespace mgpu::emu::ptx
