// Vocabulary shared by the MLIR builders and host code (TMA descriptors, validity rules),
// kept free of MLIR headers so host-only code can use it.
#pragma once

namespace mgpu::core::ir {

enum class Swizzle { None = 0, B32 = 32, B64 = 64, B128 = 128 };  // bytes per swizzle span
enum class MmaInput { BF16, F16 };

}  // namespace mgpu::core::ir
