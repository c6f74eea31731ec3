// A kernel module under construction: `module { gpu.module @NAME { <dynamic SMEM symbol>
// gpu.func @KERNEL(...) kernel {...} } }`, the shape the compile pipeline takes.
// Contract: add_kernel() creates a kernel with the given argument types and returns an
// Emitter positioned in its body, before the terminator; dynamic_smem() is the base pointer of
// the kernel's dynamic shared memory (declared once per module, aligned to 1024 bytes as
// 128-byte swizzled TMA tiles require). to_text() prints the module for compile_module().
#pragma once

#include <string>
#include <string_view>

#include "core/ir/emitter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mgpu::core::ir {

struct KernelBody {
  Emitter e;
  llvm::SmallVector<mlir::Value> args;
};

class KernelModule {
 public:
  KernelModule(mlir::MLIRContext& ctx, std::string_view gpu_module_name);

  // block_threads: the launch's block size, recorded as the kernel's known bounds
  // (.maxntid), which lets the assembler budget registers for exactly that many threads, and
  // .minnctapersm 1, which makes setmaxnreg take effect.
  KernelBody add_kernel(std::string_view name, llvm::ArrayRef<mlir::Type> arg_types, int block_threads);
  mlir::Value dynamic_smem(Emitter& e);
  std::string to_text() const;
  mlir::ModuleOp module() { return *module_; }

 private:
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::Operation* gpu_module_ = nullptr;
  mlir::OpBuilder builder_;
};

}  // namespace mgpu::core::ir
