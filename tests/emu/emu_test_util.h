// Small helpers the virtual-device tests share: a PTX register-vector operand, and a launch's
// reports (whether one of a kind is there; all of them as text for failure messages).
#pragma once

#include <cstdint>
#include <functional>
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

// The battery's measure (tests/emu/test_emu_async_battery.cc, test_emu_tmem_permit.cc): seeds
// 1..kSeeds, how many `found` says yes to; the first miss is described in `example`.
inline constexpr int kSeeds = 200;
inline int count_seeds(const std::function<LaunchResult(std::uint64_t)>& run,
                       const std::function<bool(const LaunchResult&)>& found, std::string* example) {
  int n = 0;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    LaunchResult r = run(seed);
    if (found(r)) ++n;
    else if (example && example->empty()) *example = "seed " + std::to_string(seed) + ": " + all(r);
  }
  return n;
}

inline bool clean(const LaunchResult& r) { return r.ok && r.reports.empty(); }

}  // namespace mgpu::emu::emu_test
