// The SASS of a cubin, through NVIDIA's nvdisasm. Contract: nvdisasm_candidates() lists where
// it is looked for, in order: the CUDA toolkit's bin/, then the project-local copy
// scripts/cuda_tools.sh installs (.tools/cuda/bin; the toolkit here ships without it); or only
// $MGPU_NVDISASM where it is set: MGPU_NVDISASM=off finds none (a machine without it, for tests
// and comparisons), and a value that is no executable file finds none either, never another
// one in its place; nvdisasm_setting_problem() says what is wrong with it (an environment
// problem). why_no_nvdisasm() is the reason find_nvdisasm() found none, for messages.
// disassemble() returns `nvdisasm -c` of the image; no nvdisasm throws Error{Unavailable}
// naming the paths tried (or the bad setting) and the fix, a failing one Error{Compile} with
// its output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mgpu::core {

std::vector<std::string> nvdisasm_candidates();
std::optional<std::string> nvdisasm_setting_problem();
std::optional<std::string> find_nvdisasm();
std::string why_no_nvdisasm();
std::string disassemble(std::string_view cubin_image);

}  // namespace mgpu::core
