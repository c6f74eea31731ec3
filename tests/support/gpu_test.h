// Shared by the gpu-labelled tests: a fixture that skips the whole test unless an sm_90
// device is present, and seeded random bf16 data.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/device_query.h"
#include "core/half.h"

namespace mgpu::testing {

class HopperGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    core::DeviceReport r = core::query_devices();
    for (const core::GpuInfo& g : r.gpus)
      if (g.cc_major == 9 && g.cc_minor == 0) {
        sm_count_ = g.sm_count;
        return;
      }
    GTEST_SKIP() << "needs an sm_90a GPU (" << r.unavailable.value_or("no compute capability 9.0 device") << ")";
  }
  int sm_count_ = 0;
};

using core::from_bf16;
using core::to_bf16;

// Values in [-1, 1), never all zero: zeros hide unwritten outputs and wrong indexing.
inline std::vector<std::uint16_t> random_bf16(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = to_bf16(dist(rng));
  return v;
}

}  // namespace mgpu::testing
