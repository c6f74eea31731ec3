// Runs the kernel's own tile-schedule builder on the CPU: emit_planar_snake() is emitted into
// a host function, lowered to LLVM and JIT-compiled with MLIR's ExecutionEngine, so tests
// check the very index math the GPU kernel executes, not a re-typed copy of the formula.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace mgpu::testing {

class JitSchedule {
 public:
  JitSchedule();
  ~JitSchedule();
  // (m, n) tile of linear index t for an m_tiles x n_tiles grid.
  std::pair<std::int32_t, std::int32_t> operator()(std::int32_t t, std::int32_t m_tiles, std::int32_t n_tiles,
                                                   std::int32_t minor_is_n, std::int32_t band_width) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mgpu::testing
