// What a kernel template hands to the compiler and the launcher: the module text, the entry
// point, the launch shape, and the TMA descriptors the kernel takes (as pointers in global
// memory, in argument order, before any scalar arguments). Descriptor bases are 0 here; the
// measurer fills in device addresses before encoding them. A kernel that takes_workspace takes
// one more pointer after the descriptors: a global workspace the template sizes
// (MatmulTemplate::workspace_bytes), zero-filled when allocated, which every completed launch
// leaves as the next launch needs it (so one allocation serves a timing loop).
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
  bool takes_workspace = false;
};

}  // namespace mgpu::core
