// From LLVM: mlir/test/Integration/GPU/CUDA/host-register-ranked-memref.mlir
// as of llvm/llvm-project commit 384bcdb11ec90a76e3a80f92ee37a24882b68052.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines only (mlir-runner with libmgpu_mlir_runtime, PTX for sm_90a).
// MLIR 22: gpu.host_register takes an unranked memref (a ranked one came later), so the memref is cast first.
// Upstream checks nothing but that it runs (and so does run.sh, for a program without CHECK lines).
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

module attributes {gpu.container_module} {
  func.func @main() {
    %0 = memref.alloc() : memref<64x64xf32>

    // Call host_register with a rank-2 memref.
    %u = memref.cast %0 : memref<64x64xf32> to memref<*xf32>
    gpu.host_register %u : memref<*xf32>

    memref.dealloc %0 : memref<64x64xf32>
    return
  }
}
