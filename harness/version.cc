#include "harness/version.h"

#include <filesystem>

#include <fmt/format.h>

namespace mgpu::harness {

std::string version_string() {
  return fmt::format("mgpu-tune {} (MLIR {}, CUDA toolkit {})", MGPU_VERSION, MGPU_MLIR_VERSION,
                     MGPU_CUDA_TOOLKIT_VERSION);
}

std::string executable_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace mgpu::harness
