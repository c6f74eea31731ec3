// From LLVM: mlir/test/Integration/GPU/CUDA/alloc-host-shared.mlir
// as of llvm/llvm-project commit 6f01ae0befa1934c354cdaaad64c51c5d4543b94.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines (mlir-runner with libmgpu_mlir_runtime, PTX for sm_90a); the program is upstream's.
// 
// EXPECT-FINDINGS below: a real bug of the program. It allocates memref<1xi32> (4 bytes) with
// gpu.alloc host_shared (cuMemAllocManaged) and then stores, loads and stores element [1] -- one
// past the end -- on the host and in the kernel. A GPU hands out managed memory by the page, so the
// overrun lands in the allocation's slack and the output looks right; the virtual device bounds the
// allocation to the 4 bytes asked for and reports the kernel's load as an illegal address.
// EXPECT-FINDINGS
// FINDING: out-of-bounds: load of 4 bytes at global address 0x{{[0-9a-f]+}} is outside every allocation
// FINDING: checkers reported findings for kernel 'main_kernel'
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --check-prefix=FINDING

// CHECK: 2000
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c1000_i32 = arith.constant 1000 : i32
    %memref = gpu.alloc  host_shared () : memref<1xi32>
    memref.store %c1000_i32, %memref[%c1] : memref<1xi32>
    gpu.launch blocks(%arg0, %arg1, %arg2) in (%arg6 = %c1, %arg7 = %c1, %arg8 = %c1) threads(%arg3, %arg4, %arg5) in (%arg9 = %c1, %arg10 = %c1, %arg11 = %c1) {
      %1 = memref.load %memref[%c1] : memref<1xi32>
      %2 = arith.addi %1, %1 : i32
      memref.store %2, %memref[%c1] : memref<1xi32>
      gpu.terminator
    }
    %0 = memref.load %memref[%c1] : memref<1xi32>
    vector.print %0 : i32
    return
  }
}
