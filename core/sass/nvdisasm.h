// The SASS of a cubin, through NVIDIA's nvdisasm. Contract: nvdisasm_candidates() lists where
// it is looked for, in order: $MGPU_NVDISASM, the CUDA toolkit's bin/, then the project-local
// copy scripts/cuda_tools.sh installs (.tools/cuda/bin; the toolkit here ships without it);
// MGPU_NVDISASM=off finds none (a machine without it, for tests and comparisons).
// disassemble() returns `nvdisasm -c` of the image; no nvdisasm throws Error{Unavailable}
// naming the paths tried and the fix, a failing one Error{Compile} with its output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mgpu::core {

std::vector<std::string> nvdisasm_candidates();
std::optional<std::string> find_nvdisasm();
std::string disassemble(std::string_view cubin_image);

}  // namespace mgpu::core
