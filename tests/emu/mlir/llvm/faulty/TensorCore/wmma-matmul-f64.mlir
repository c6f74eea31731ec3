// From LLVM: mlir/test/Integration/GPU/CUDA/TensorCore/wmma-matmul-f64.mlir
// as of llvm/llvm-project commit 1799e6a9448a382dd76bdecf2457e9c78c7c1087.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// The earlier version of TensorCore/sm80/wmma-matmul-f64.mlir.
// Changed: the RUN lines (upstream's pipeline options with cubin-format=isa and +ptx76: MLIR 22's
// default PTX 6.0 has no sm_80; mlir-runner with libmgpu_mlir_runtime).
//
// EXPECT-FINDINGS below: a real bug of the program. It registers %a, %b and %c with gpu.host_register
// but not %d, the memref the kernel's wmma.store writes (upstream's later version, sm80/, registers
// it too): a kernel storing to host memory that was never registered is an illegal address (a GPU
// faults too, unless the system happens to map pageable memory for the device). The virtual device
// reports the store.
// EXPECT-FINDINGS
// FINDING: out-of-bounds: store of 8 bytes at global address 0x{{[0-9a-f]+}} is outside every allocation
// FINDING: checkers reported findings for kernel 'main_kernel'
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 cubin-features=+ptx76 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: 2>&1 | FileCheck %s --check-prefix=FINDING
// MGPU-PIPELINE: -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 cubin-features=+ptx76 cubin-format=isa"

#map0 = affine_map<(d0, d1) -> (d1, d0)>

func.func @main() {
  %a = memref.alloc() : memref<8x4xf64>
  %b = memref.alloc() : memref<4x8xf64>
  %c = memref.alloc() : memref<8x8xf64>
  %d = memref.alloc() : memref<8x8xf64>

  %f1 = arith.constant 1.0e+00 : f64
  %fcst = arith.constant 3.14e+00 : f64
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index

  // Initialize the Input matrixes with ones.
  scf.for %arg0 = %c0 to %c8 step %c1 {
    scf.for %arg1 = %c0 to %c4 step %c1 {
      memref.store %f1, %a[%arg0, %arg1] : memref<8x4xf64>
      memref.store %f1, %b[%arg1, %arg0] : memref<4x8xf64>
    }
  }
  // Initialize the accumulator matrix with a constant.
  scf.for %arg0 = %c0 to %c8 step %c1 {
    scf.for %arg1 = %c0 to %c8 step %c1 {
      memref.store %fcst, %c[%arg0, %arg1] : memref<8x8xf64>
    }
  }

  %2 = memref.cast %a : memref<8x4xf64> to memref<*xf64>
  %20 = memref.cast %b : memref<4x8xf64> to memref<*xf64>
  %33 = memref.cast %c : memref<8x8xf64> to memref<*xf64>
  %34 = memref.cast %d : memref<8x8xf64> to memref<*xf64>

  gpu.host_register %2 : memref<*xf64>
  gpu.host_register %20 : memref<*xf64>
  gpu.host_register %33 : memref<*xf64>

  gpu.launch blocks(%bx, %by, %bz) in (%grid_x = %c1, %grid_y = %c1, %grid_z = %c1)
             threads(%tx, %ty, %tz) in (%block_x = %c32, %block_y = %c1, %block_z = %c1) {
    %A = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 4 : index} : memref<8x4xf64> -> !gpu.mma_matrix<8x4xf64, "AOp">
    %B = gpu.subgroup_mma_load_matrix %b[%c0, %c0] {leadDimension = 8 : index} : memref<4x8xf64> -> !gpu.mma_matrix<4x8xf64, "BOp">
    %C = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {leadDimension = 8 : index} : memref<8x8xf64> -> !gpu.mma_matrix<8x8xf64, "COp">

    %R = gpu.subgroup_mma_compute %A, %B, %C : !gpu.mma_matrix<8x4xf64, "AOp">, !gpu.mma_matrix<4x8xf64, "BOp"> -> !gpu.mma_matrix<8x8xf64, "COp">

    gpu.subgroup_mma_store_matrix %R, %d[%c0, %c0] {leadDimension = 8 : index}: !gpu.mma_matrix<8x8xf64, "COp">, memref<8x8xf64>
    gpu.terminator
  }
  // Print the memref after computation.
  call @printMemrefF64(%34) : (memref<*xf64>) -> ()
  // CHECK: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14],
  // CHECK-NEXT: [7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14,   7.14]
  return
}

func.func private @printMemrefF64(memref<*xf64>)
