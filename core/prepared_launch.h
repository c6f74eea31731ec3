// A built kernel made ready to launch on real buffers: its TMA descriptors encoded for the
// given device addresses and copied to device memory, its argument list assembled
// (descriptor pointers in order, the workspace pointer if the kernel takes one, then the i32
// scalars), and its launch shape fixed.
// Contract: the PreparedLaunch owns the descriptor buffers; launch() may be called any number
// of times (timing loops); failures throw Error{InvalidInput} for bad descriptors and
// Error{Launch} for driver errors.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/built_kernel.h"
#include "core/cuda_context.h"
#include "core/cuda_kernel.h"

namespace mgpu::core {

class PreparedLaunch {
 public:
  // `workspace`: the kernel's workspace (0 when it takes none; Error{InvalidInput} when the
  // kernel takes one and none is given, or the other way round).
  PreparedLaunch(const BuiltKernel& kernel, std::span<const CUdeviceptr> tensor_bases,
                 std::vector<std::int32_t> scalars, unsigned grid_x, CUdeviceptr workspace = 0);
  PreparedLaunch(const PreparedLaunch&) = delete;
  PreparedLaunch& operator=(const PreparedLaunch&) = delete;

  void launch(CUfunction fn, CUstream stream = nullptr);
  const LaunchSpec& spec() const { return spec_; }

 private:
  std::vector<DeviceBuffer> descriptors_;
  std::vector<CUdeviceptr> descriptor_ptrs_;
  CUdeviceptr workspace_ = 0;
  std::vector<std::int32_t> scalars_;
  std::vector<void*> args_;
  LaunchSpec spec_;
};

// A kernel's workspace: `bytes` of zero-filled device memory (nothing when bytes is 0), and
// the pointer PreparedLaunch takes for it (0 for nothing).
std::optional<DeviceBuffer> zeroed_workspace(std::int64_t bytes);
inline CUdeviceptr workspace_ptr(const std::optional<DeviceBuffer>& w) { return w ? w->ptr() : 0; }

}  // namespace mgpu::core
