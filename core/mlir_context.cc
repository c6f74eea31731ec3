// Registers what kernel templates need; the one place that knows the dialect list.
#include "core/mlir_context.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

namespace mgpu::core {
namespace {

// Only the dialects a kernel template emits, and the interfaces their lowering needs.
mlir::DialectRegistry make_registry() {
  mlir::DialectRegistry r;
  r.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect,
           mlir::func::FuncDialect, mlir::gpu::GPUDialect, mlir::index::IndexDialect,
           mlir::LLVM::LLVMDialect, mlir::math::MathDialect, mlir::memref::MemRefDialect,
           mlir::nvgpu::NVGPUDialect, mlir::NVVM::NVVMDialect, mlir::scf::SCFDialect,
           mlir::ub::UBDialect, mlir::vector::VectorDialect>();
  mlir::arith::registerConvertArithToLLVMInterface(r);
  mlir::cf::registerConvertControlFlowToLLVMInterface(r);
  mlir::registerConvertFuncToLLVMInterface(r);
  mlir::registerConvertMemRefToLLVMInterface(r);
  mlir::registerConvertMathToLLVMInterface(r);
  mlir::index::registerConvertIndexToLLVMInterface(r);
  mlir::ub::registerConvertUBToLLVMInterface(r);
  mlir::registerConvertNVVMToLLVMInterface(r);
  mlir::NVVM::registerConvertGpuToNVVMInterface(r);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(r);
  mlir::registerBuiltinDialectTranslation(r);
  mlir::registerGPUDialectTranslation(r);
  mlir::registerLLVMDialectTranslation(r);
  mlir::registerNVVMDialectTranslation(r);
  return r;
}

}  // namespace

std::unique_ptr<mlir::MLIRContext> make_mlir_context() {
  auto ctx = std::make_unique<mlir::MLIRContext>(make_registry(), mlir::MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  return ctx;
}

}  // namespace mgpu::core
