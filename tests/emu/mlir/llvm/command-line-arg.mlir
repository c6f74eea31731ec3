// From LLVM: mlir/test/Integration/GPU/CUDA/command-line-arg.mlir
// as of llvm/llvm-project commit 240c2561c832bfd6fbc57af93e6ee27fded8af80.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// A compiler test: it checks that ptxas gets the pipeline's ptxas-cmd-options, from the log that
// -debug-only=serialize-to-binary prints. Only an LLVM built with assertions has -debug-only (Debian's
// MLIR 22 has not), so where it is missing the test is skipped (MGPU-REQUIRES).
// RUN: mlir-opt %s | mlir-opt -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 ptxas-cmd-options='-v --register-usage-level=8' allow-pattern-rollback=0" -debug-only=serialize-to-binary 2>&1 | FileCheck %s
// MGPU-REQUIRES: "$bin/mlir-opt" --help-hidden | grep -q -- '--debug-only='
// MGPU-REQUIRES-WHY: this mlir-opt has no -debug-only (an LLVM built without assertions)
// MGPU-PIPELINE: -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 ptxas-cmd-options='-v --register-usage-level=8' allow-pattern-rollback=0" -debug-only=serialize-to-binary
// MGPU-COMPILE-ONLY: CHECK

func.func @host_function(%arg0 : f32, %arg1 : memref<?xf32>) {
    %cst = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %cst2 = memref.dim %arg1, %c0 : memref<?xf32>
    
    gpu.launch blocks(%bx, %by, %bz) in (%grid_x = %cst, %grid_y = %cst, %grid_z = %cst)
                threads(%tx, %ty, %tz) in (%block_x = %cst2, %block_y = %cst, %block_z = %cst) {
        memref.store %arg0, %arg1[%tx] : memref<?xf32>
        gpu.terminator
    }

    return
}

// CHECK: ptxas -arch sm_80
// CHECK-SAME: -v 
// CHECK-SAME: --register-usage-level=8
