// What a kernel template hands to the compiler and the launcher: the module text, the entry
// point, the launch shape, and the TMA descriptors the kernel takes (as pointers in global
// memory, in argument order, before any scalar arguments). Descriptor bases are 0 here; the
// measurer fills in device addresses before encoding them.
#pragma once

#include <string>
#include <vector>

#include "core/tensor_map.h"

namespace mgpu::core {

struct BuiltKernel {
  std::string mlir;
  std::string kernel_name;
  int block_threads = 128;
  int cluster_size = 1;
  int dynamic_smem_bytes = 0;
  std::vector<TensorMap2D> tensor_maps;
};

}  // namespace mgpu::core
