// From LLVM: mlir/test/Integration/GPU/CUDA/module-to-binary-compiler-log.mlir
// as of llvm/llvm-project commit bf4aafd400b7019996a477c4f8041d09a2379d06.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// A compiler test: it checks that the NVVM target's collect-compiler-diagnostics flag stores ptxas's
// log in the binary's properties (ISACompilerLog). MLIR 22 has no such property (the flag came later),
// so the test is not run (MGPU-UNSUPPORTED); the program is upstream's, with the target's chip named
// (sm_90a: CUDA 13's ptxas refuses the default sm_50).
// RUN: mlir-opt %s --gpu-module-to-binary="format=fatbin opts=--verbose" | FileCheck %s
// MGPU-UNSUPPORTED: MLIR 22 stores no ISACompilerLog (collect-compiler-diagnostics is newer than MLIR 22)
// MGPU-PIPELINE: --gpu-module-to-binary="format=fatbin opts=--verbose"
// MGPU-COMPILE-ONLY: CHECK

module attributes {gpu.container_module} {
  // CHECK-LABEL: gpu.binary @kernel_module
  // CHECK: properties = {{{.*}}ISACompilerLog = {{.*}}
  gpu.module @kernel_module [#nvvm.target<chip = "sm_90a", flags = {"collect-compiler-diagnostics"}>] {
    llvm.func @kernel(%arg0: i32, %arg1: !llvm.ptr,
        %arg2: !llvm.ptr, %arg3: i64, %arg4: i64,
        %arg5: i64) attributes {gpu.kernel} {
      llvm.return
    }
  }
}
