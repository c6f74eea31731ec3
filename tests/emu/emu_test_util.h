// Small helpers the virtual-device tests share: a PTX register-vector operand, and a launch's
// reports (whether one of a kind is there; all of them as text for failure messages).
#pragma once

#include <string>

#include "core/emu/device.h"

namespace mgpu::emu::emu_test {

// Registers %r<first> .. %r<first + n - 1> as a PTX vector operand.
inline std::string regs(int n, int first = 100) {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", %r" : "%r") + std::to_string(first + i);
  return s + "}";
}

inline bool has(const LaunchResult& r, ReportKind k) {
  for (const auto& x : r.reports)
    if (x.kind == k) return true;
  return false;
}

inline std::string all(const LaunchResult& r) {
  std::string s;
  for (const auto& x : r.reports) s += x.format() + "\n";
  return s;
}

}  // namespace mgpu::emu::emu_test
