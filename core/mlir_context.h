// The MLIRContext every MGPU compile and kernel build uses: only the dialects kernel templates
// emit, plus the interfaces that lower them to LLVM/NVVM and translate them to LLVM IR.
// Contract: make_mlir_context() returns a fresh single-threaded context with those dialects
// loaded. A context per compile keeps memory flat (uniqued attributes such as the PTX string
// live as long as their context) and lets pool workers share nothing.
#pragma once

#include <memory>

namespace mlir {
class MLIRContext;
}

namespace mgpu::core {

std::unique_ptr<mlir::MLIRContext> make_mlir_context();

}  // namespace mgpu::core
