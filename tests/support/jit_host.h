// JIT-compiling a host module of func/arith ops with MLIR's ExecutionEngine: how the schedule
// tests run the kernels' own index builders on the CPU. Contract: the module is lowered to
// LLVM and consumed; errors throw std::runtime_error naming `what`.
#pragma once

#include <memory>
#include <string>

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

namespace mgpu::testing {

std::unique_ptr<mlir::ExecutionEngine> jit_host_module(mlir::ModuleOp module, const std::string& what);

}  // namespace mgpu::testing
