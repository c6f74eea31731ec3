# Static linking of the MLIR/LLVM libraries the MGPU backend uses (MGPU_STATIC=ON).
# Debian builds MLIR's static libraries against the LLVM *shared* library: every imported
# MLIR target lists `LLVM` (libLLVM.so) among its link libraries. A self-contained binary
# needs LLVM's static component libraries instead, so the imported targets are rewritten,
# transitively, to link `mgpu_llvm_static`.

set(MGPU_MLIR_STATIC_LIBS
  MLIRIR MLIRParser MLIRPass MLIRTransforms MLIRSupport
  MLIRAffineDialect MLIRArithDialect MLIRControlFlowDialect MLIRFuncDialect MLIRGPUDialect
  MLIRIndexDialect MLIRLLVMDialect MLIRMathDialect MLIRMemRefDialect MLIRNVGPUDialect
  MLIRNVVMDialect MLIRSCFDialect MLIRUBDialect MLIRVectorDialect
  MLIRArithToLLVM MLIRControlFlowToLLVM MLIRFuncToLLVM MLIRGPUToNVVMTransforms MLIRIndexToLLVM
  MLIRMathToLLVM MLIRMemRefToLLVM MLIRNVVMToLLVM MLIRUBToLLVM MLIRNVGPUToNVVM MLIRVectorToSCF
  MLIRSCFToControlFlow MLIRAffineToStandard MLIRReconcileUnrealizedCasts
  MLIRGPUTransforms MLIRMemRefTransforms MLIRNVVMTarget
  MLIRBuiltinToLLVMIRTranslation MLIRGPUToLLVMIRTranslation MLIRLLVMToLLVMIRTranslation
  MLIRNVVMToLLVMIRTranslation)

function(_mgpu_rewrite_llvm target)
  get_property(done GLOBAL PROPERTY "_MGPU_REWRITTEN_${target}")
  if(done)
    return()
  endif()
  set_property(GLOBAL PROPERTY "_MGPU_REWRITTEN_${target}" TRUE)
  get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT libs)
    return()
  endif()
  list(TRANSFORM libs REPLACE "^LLVM$" "mgpu_llvm_static")
  set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${libs}")
  foreach(dep IN LISTS libs)
    if(dep MATCHES "^MLIR" AND TARGET ${dep})
      _mgpu_rewrite_llvm(${dep})
    endif()
  endforeach()
endfunction()

function(mgpu_link_static_mlir out_target)
  # LLVMSupport's link interface names these imported targets; the shared build never
  # needed them. (libzstd-dev is installed by scripts/bundle.sh.)
  list(APPEND CMAKE_MODULE_PATH "${LLVM_CMAKE_DIR}")
  find_package(ZLIB REQUIRED)
  find_package(zstd REQUIRED)
  llvm_map_components_to_libnames(llvm_static
    NVPTXCodeGen NVPTXDesc NVPTXInfo passes ipo linker irreader irprinter bitwriter bitreader asmparser frontendoffloading
    frontendopenmp object mc target codegen support core targetparser demangle)
  add_library(mgpu_llvm_static INTERFACE)
  target_link_libraries(mgpu_llvm_static INTERFACE ${llvm_static})
  foreach(lib IN LISTS MGPU_MLIR_STATIC_LIBS)
    _mgpu_rewrite_llvm(${lib})
  endforeach()
  # Archives reference each other in cycles: let the linker revisit them.
  target_link_libraries(${out_target} INTERFACE
    "-Wl,--start-group" ${MGPU_MLIR_STATIC_LIBS} mgpu_llvm_static "-Wl,--end-group")
endfunction()
