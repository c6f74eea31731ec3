#include "tests/support/jit_host.h"

#include <stdexcept>

#include "llvm/Support/TargetSelect.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mgpu::testing {

std::unique_ptr<mlir::ExecutionEngine> jit_host_module(mlir::ModuleOp module, const std::string& what) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::PassManager pm(module.getContext());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  if (mlir::failed(pm.run(module))) throw std::runtime_error("lowering " + what + " to LLVM failed");
  auto engine = mlir::ExecutionEngine::create(module);
  if (!engine) throw std::runtime_error("JIT of " + what + " failed: " + llvm::toString(engine.takeError()));
  module->erase();
  return std::move(*engine);
}

}  // namespace mgpu::testing
