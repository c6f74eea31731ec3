// Loading a cubin and launching its kernels with cuLaunchKernelEx. Contract: LoadedModule
// owns the CUmodule (unloaded on destruction); launch() sets the function's dynamic SMEM
// limit to spec.dynamic_smem_bytes (and allows non-portable cluster sizes above 8) before
// launching with grid, block and cluster dimensions; `args` are pointers to each kernel
// argument, as cuLaunchKernelEx takes them. Launch failures throw Error{Launch}.
#pragma once

#include <cuda.h>

#include <array>
#include <string>

namespace mgpu::core {

struct LaunchSpec {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{128, 1, 1};
  std::array<unsigned, 3> cluster{1, 1, 1};
  unsigned dynamic_smem_bytes = 0;
};

class LoadedModule {
 public:
  explicit LoadedModule(const std::string& cubin);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  CUfunction function(const std::string& name) const;

 private:
  CUmodule module_{};
};

void launch(CUfunction fn, const LaunchSpec& spec, void** args, CUstream stream = nullptr);

// What to hand cuModuleLoadData for a compiled unit: the cubin on a GPU, the PTX on the
// virtual device (it runs the exact PTX ptxas assembled).
const std::string& loadable_image(const std::string& ptx, const std::string& cubin);

}  // namespace mgpu::core
