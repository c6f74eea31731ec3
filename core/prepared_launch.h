// A built kernel made ready to launch on real buffers: its TMA descriptors encoded for the
// given device addresses and copied to device memory, its argument list assembled
// (descriptor pointers in order, then the i32 scalars), and its launch shape fixed.
// Contract: the PreparedLaunch owns the descriptor buffers; launch() may be called any number
// of times (timing loops); failures throw Error{InvalidInput} for bad descriptors and
// Error{Launch} for driver errors.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <span>
#include <vector>

#include "core/built_kernel.h"
#include "core/cuda_context.h"
#include "core/cuda_kernel.h"

namespace mgpu::core {

class PreparedLaunch {
 public:
  PreparedLaunch(const BuiltKernel& kernel, std::span<const CUdeviceptr> tensor_bases,
                 std::vector<std::int32_t> scalars, unsigned grid_x);
  PreparedLaunch(const PreparedLaunch&) = delete;
  PreparedLaunch& operator=(const PreparedLaunch&) = delete;

  void launch(CUfunction fn, CUstream stream = nullptr);
  const LaunchSpec& spec() const { return spec_; }

 private:
  std::vector<DeviceBuffer> descriptors_;
  std::vector<CUdeviceptr> descriptor_ptrs_;
  std::vector<std::int32_t> scalars_;
  std::vector<void*> args_;
  LaunchSpec spec_;
};

}  // namespace mgpu::core
