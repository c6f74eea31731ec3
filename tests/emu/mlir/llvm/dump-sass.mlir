// From LLVM: mlir/test/Integration/GPU/CUDA/dump-sass.mlir
// as of llvm/llvm-project commit 762dd9d91482aaebb42fba4d43bf2883b4b79c76.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// A compiler test: it checks the SASS that -debug-only=dump-sass prints through nvdisasm. That needs
// an LLVM built with assertions (for -debug-only) and nvdisasm; where either is missing the test is
// skipped (MGPU-REQUIRES).
// RUN: mlir-opt %s | mlir-opt -gpu-lower-to-nvvm-pipeline="allow-pattern-rollback=0" -debug-only=dump-sass 2>&1 | FileCheck %s
// MGPU-REQUIRES: "$bin/mlir-opt" --help-hidden | grep -q -- '--debug-only=' && command -v nvdisasm
// MGPU-REQUIRES-WHY: this mlir-opt has no -debug-only (an LLVM built without assertions), or there is no nvdisasm
// MGPU-PIPELINE: -gpu-lower-to-nvvm-pipeline="allow-pattern-rollback=0" -debug-only=dump-sass
// MGPU-COMPILE-ONLY: CHECK

// CHECK: MOV
// CHECK: STG.E 

func.func @other_func(%arg0 : f32, %arg1 : memref<?xf32>) {
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
