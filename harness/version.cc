#include "harness/version.h"

#include <fmt/format.h>

namespace mgpu::harness {

std::string version_string() {
  return fmt::format("mgpu-tune {} (MLIR {}, CUDA toolkit {})", MGPU_VERSION, MGPU_MLIR_VERSION,
                     MGPU_CUDA_TOOLKIT_VERSION);
}

}  // namespace mgpu::harness
