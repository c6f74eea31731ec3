#include "core/ir/kernel_module.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mgpu::core::ir {
namespace {
constexpr const char* kDynamicSmem = "mgpu_dynamic_smem";
constexpr int kSmemAlignment = 1024;  // 128-byte swizzle repeats every 1024 bytes
}  // namespace

KernelModule::KernelModule(mlir::MLIRContext& ctx, std::string_view gpu_module_name)
    : builder_(&ctx) {
  mlir::Location loc = builder_.getUnknownLoc();
  module_ = mlir::ModuleOp::create(loc);
  (*module_)->setAttr("gpu.container_module", builder_.getUnitAttr());
  builder_.setInsertionPointToEnd(module_->getBody());
  auto gm = mlir::gpu::GPUModuleOp::create(builder_, loc, llvm::StringRef(gpu_module_name));
  gpu_module_ = gm;
  // The dynamic SMEM symbol: an external, zero-sized, 1024-aligned array in address space 3.
  builder_.setInsertionPointToStart(gm.getBody());
  auto array = mlir::LLVM::LLVMArrayType::get(builder_.getI8Type(), 0);
  mlir::LLVM::GlobalOp::create(builder_, loc, array, /*isConstant=*/false, mlir::LLVM::Linkage::External,
                               kDynamicSmem, mlir::Attribute(), kSmemAlignment, /*addrSpace=*/3);
}

KernelBody KernelModule::add_kernel(std::string_view name, llvm::ArrayRef<mlir::Type> arg_types, int block_threads) {
  auto gm = mlir::cast<mlir::gpu::GPUModuleOp>(gpu_module_);
  mlir::Location loc = builder_.getUnknownLoc();
  builder_.setInsertionPointToEnd(gm.getBody());
  auto fn = mlir::gpu::GPUFuncOp::create(builder_, loc, llvm::StringRef(name),
                                         builder_.getFunctionType(arg_types, {}));
  fn->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), builder_.getUnitAttr());
  fn.setKnownBlockSizeAttr(builder_.getDenseI32ArrayAttr({block_threads, 1, 1}));
  // .minnctapersm 1 (PTX ISA "Performance-Tuning Directives"): with .maxntid it fixes the
  // register count at entry, without which ptxas ignores setmaxnreg (C7508). One CTA per SM
  // is true of every launch, so the cap is the one .maxntid alone already implied.
  fn->setAttr("nvvm.minctasm", builder_.getI32IntegerAttr(1));
  mlir::Block& body = fn.getBody().front();
  builder_.setInsertionPointToEnd(&body);
  mlir::gpu::ReturnOp::create(builder_, loc);
  builder_.setInsertionPointToStart(&body);
  KernelBody kb{Emitter{builder_, loc}, {}};
  for (mlir::BlockArgument a : body.getArguments()) kb.args.push_back(a);
  return kb;
}

mlir::Value KernelModule::dynamic_smem(Emitter& e) {
  return mlir::LLVM::AddressOfOp::create(e.b, e.loc, e.smem_ptr_type(), kDynamicSmem);
}

std::string KernelModule::to_text() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  mlir::ModuleOp m = module_.get();
  m.print(os);
  return s;
}

}  // namespace mgpu::core::ir
