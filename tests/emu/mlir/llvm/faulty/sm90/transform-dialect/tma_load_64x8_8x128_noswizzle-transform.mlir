// From LLVM: mlir/test/Integration/GPU/CUDA/sm90/transform-dialect/tma_load_64x8_8x128_noswizzle-transform.mlir
// as of llvm/llvm-project commit 1c6e71b33dbd177590cb517a84fc1dc802911bf8.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines. Upstream's two runs (one checks the PTX through -debug-only=serialize-to-isa,
// which Debian's MLIR 22 has not; one runs the program) are one here: the same pass stages with
// format=isa (MLIR 22 has no -naive-convert-vector-to-llvm: -convert-vector-to-llvm), whose IR and PTX
// run.sh checks with the CHECK-PTX lines before mlir-runner runs it with libmgpu_mlir_runtime. The
// program and its CHECK lines are upstream's.
//
// EXPECT-FINDINGS below: a real bug, in the code MLIR's transform.nvgpu.rewrite_copy_as_tma generates for
// the program: every one of the 128 threads runs mbarrier.init on the one mbarrier (the PTX's
// `mbarrier.init.shared.b64 [__mbarrier]` is not predicated), and nothing orders those inits before the
// arrivals: thread 0 arrives with expect_tx and issues the TMA loads, the other threads arrive with 0,
// each right after its own init. From the second init on, a live mbarrier is initialized again --
// undefined in the PTX ISA (mbarrier.init: an object must be invalidated first) -- and an init that
// lands after arrivals wipes them (the wait then never ends, or ends early). The virtual device
// reports the second init.
// EXPECT-FINDINGS
// FINDING: {{[-a-z]+}}: mbarrier.init on the live mbarrier at shared offset {{[0-9]+}}
// FINDING: checkers reported findings for kernel 'main_kernel'
// RUN: mlir-opt %s -transform-interpreter -test-transform-dialect-erase-schedule -convert-nvgpu-to-nvvm -gpu-kernel-outlining -convert-scf-to-cf -convert-nvvm-to-llvm -convert-vector-to-llvm -convert-math-to-llvm -expand-strided-metadata -lower-affine -convert-index-to-llvm=index-bitwidth=32 -convert-arith-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm -canonicalize -expand-strided-metadata --nvvm-attach-target="module=main_kernel features=+ptx80 chip=sm_90 O=3" \
// RUN: | mlir-opt -pass-pipeline='builtin.module(gpu.module(strip-debuginfo,convert-gpu-to-nvvm,convert-index-to-llvm{index-bitwidth=32},canonicalize,cse))' \
// RUN: | mlir-opt --gpu-to-llvm --gpu-module-to-binary=format=isa -canonicalize -cse -reconcile-unrealized-casts \
// RUN: | tee >(FileCheck %s --check-prefixes=CHECK-PTX) (each stage's IR and the unescaped PTX, by run.sh) \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: 2>&1 | FileCheck %s --check-prefix=FINDING
// MGPU-PIPELINE: -transform-interpreter -test-transform-dialect-erase-schedule -convert-nvgpu-to-nvvm -gpu-kernel-outlining -convert-scf-to-cf -convert-nvvm-to-llvm -convert-vector-to-llvm -convert-math-to-llvm -expand-strided-metadata -lower-affine -convert-index-to-llvm=index-bitwidth=32 -convert-arith-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm -canonicalize -expand-strided-metadata --nvvm-attach-target="module=main_kernel features=+ptx80 chip=sm_90 O=3"
// MGPU-PIPELINE: -pass-pipeline='builtin.module(gpu.module(strip-debuginfo,convert-gpu-to-nvvm,convert-index-to-llvm{index-bitwidth=32},canonicalize,cse))'
// MGPU-PIPELINE: --gpu-to-llvm --gpu-module-to-binary=format=isa -canonicalize -cse -reconcile-unrealized-casts
// MGPU-COMPILE-CHECK: CHECK-PTX

// Basic PTX check to make sure we are generating the right instructions.
// CHECK-PTX: mbarrier.init.shared.b64
// CHECK-PTX: mbarrier.arrive.expect_tx.shared.b64
// CHECK-PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-PTX: mbarrier.arrive.expect_tx.shared.b64
// CHECK-PTX: mbarrier.try_wait.parity.shared.b64

// CHECK: [GPU] TMA LOADED lhs[45][7] 7.000000
// CHECK: [GPU] TMA LOADED rhs[7][0] 3.000000

memref.global "private" @bufferLhsGlobal : memref<64x8xf32, 3>
memref.global "private" @bufferRhsGlobal : memref<8x128xf32, 3>
func.func @main() {
  %c10000000 = arith.constant 10000000 : index
  %c6144 = arith.constant 6144 : index
  %c45 = arith.constant 45 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 3.000000e+00 : f32
  %alloc = memref.alloc() : memref<64x8xf32>
  %alloc_0 = memref.alloc() : memref<8x128xf32>
  scf.for %arg0 = %c0 to %c8 step %c1 {
    scf.for %arg1 = %c0 to %c128 step %c1 {
      memref.store %cst, %alloc_0[%arg0, %arg1] : memref<8x128xf32>
    }
  }
  scf.for %arg0 = %c0 to %c64 step %c1 {
    scf.for %arg1 = %c0 to %c8 step %c1 {
      %5 = arith.index_cast %arg1 : index to i64
      %6 = arith.uitofp %5 : i64 to f32
      memref.store %6, %alloc[%arg0, %arg1] : memref<64x8xf32>
    }
  }
  %0 = gpu.wait async
  %memref, %asyncToken = gpu.alloc async [%0] () : memref<64x8xf32>
  %memref_1, %asyncToken_2 = gpu.alloc async [%0] () : memref<8x128xf32>
  %1 = gpu.memcpy async [%0] %memref, %alloc : memref<64x8xf32>, memref<64x8xf32>
  %2 = gpu.memcpy async [%0] %memref_1, %alloc_0 : memref<8x128xf32>, memref<8x128xf32>

  gpu.launch blocks(%bx, %by, %bz) in (%grid_x = %c1, %grid_y = %c1, %grid_z = %c1)
            threads(%tx, %ty, %tz) in (%block_x = %c128, %block_y = %c1, %block_z = %c1) {
    %out = memref.get_global @bufferLhsGlobal : memref<64x8xf32, 3>
    %out_1 = memref.get_global @bufferRhsGlobal : memref<8x128xf32, 3>
    linalg.copy ins(%memref: memref<64x8xf32>) outs(%out: memref<64x8xf32, 3>)
    linalg.copy ins(%memref_1: memref<8x128xf32>) outs(%out_1: memref<8x128xf32, 3>)

    %6 = gpu.thread_id  x
    %10 = arith.cmpi eq, %6, %c0 : index
    scf.if %10 {
      %11 = memref.load %out[%c45, %c7] : memref<64x8xf32, 3>
      %12 = memref.load %out_1[%c7, %c0] : memref<8x128xf32, 3>
      gpu.printf "[GPU] TMA LOADED lhs[45][7] %f\0A", %11 : f32
      gpu.printf "[GPU] TMA LOADED rhs[7][0] %f\0A", %12 : f32
    }
    gpu.terminator
  }

  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg1: !transform.any_op {transform.readonly}) {
    %copy = transform.structured.match ops{["linalg.copy"]} in %arg1
      : (!transform.any_op) -> !transform.any_op
    transform.nvgpu.rewrite_copy_as_tma %copy
      : (!transform.any_op) -> ()
      transform.yield
  }
}
