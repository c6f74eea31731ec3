// From LLVM: mlir/test/Integration/GPU/CUDA/sm90/tma_load_64x8_8x128_noswizzle.mlir
// as of llvm/llvm-project commit 0b389041ba7c1c9bcc5b354a9db0301e4ec07b4d.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines. Upstream's two runs (one checks the PTX through -debug-only=serialize-to-isa,
// which Debian's MLIR 22 has not; one runs the program) are one here: the same pass stages, with
// MLIR 22's option names (finalize-memref-to-llvm has no use-opaque-pointers: pointers are opaque) and
// format=isa, whose PTX run.sh checks with the CHECK-PTX lines before mlir-runner runs it with
// libmgpu_mlir_runtime. gpu.printf takes a comma after its format in MLIR 22, and mbarrier operations
// name their barrier as %9[%c0] and wait on an i1 parity. The CHECK-PTX lines of the two TMA loads
// read `.global.tile.mbarrier`, as MLIR 22 prints them (so do upstream's later versions); the
// program and the other CHECK lines are upstream's.
//
// EXPECT-FINDINGS below: two real bugs of the program. (1) Every one of the 128 threads runs
// mbarrier.init on the same mbarrier (the init is not predicated on one thread): from the second on,
// each initializes a live mbarrier, which the PTX ISA leaves undefined (mbarrier.init: an object must
// be invalidated before it is initialized again) -- the racy-init pattern. (2) Before issuing the TMA
// loads, thread 0 reads lhs[0][0] and rhs[0][0] of the shared buffers and prints them as
// "TMA BEFORE": shared memory that nothing has written (a GPU promises no zeros; the upstream CHECK
// lines expect 0.000000). The virtual device fills fresh shared memory with NaN and reports both.
// EXPECT-FINDINGS
// FINDING-DAG: {{[-a-z]+}}: mbarrier.init on the live mbarrier at shared offset {{[0-9]+}}
// FINDING-DAG: uninitialized{{[-a-z]*}}: read of shared offset 0 that nothing has written
// FINDING-DAG: uninitialized{{[-a-z]*}}: read of shared offset 2048 that nothing has written
// FINDING: checkers reported findings for kernel 'main_kernel'
// RUN: mlir-opt %s --convert-nvgpu-to-nvvm -gpu-kernel-outlining -convert-nvvm-to-llvm -convert-nvgpu-to-nvvm -convert-scf-to-cf -convert-vector-to-llvm -convert-index-to-llvm=index-bitwidth=32 -convert-arith-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm -expand-strided-metadata --nvvm-attach-target="module=main_kernel features=+ptx80 chip=sm_90 O=3" \\
// RUN: | mlir-opt -pass-pipeline='builtin.module(gpu.module(strip-debuginfo,convert-gpu-to-nvvm,convert-index-to-llvm{index-bitwidth=32},canonicalize,cse))' \\
// RUN: | mlir-opt --gpu-to-llvm --gpu-module-to-binary=format=isa -canonicalize -cse -reconcile-unrealized-casts \\
// RUN: | tee >(FileCheck %s --check-prefixes=CHECK-PTX) (the PTX, unescaped by run.sh) \\
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \\
// RUN: 2>&1 | FileCheck %s --check-prefix=FINDING
// MGPU-PIPELINE: --convert-nvgpu-to-nvvm -gpu-kernel-outlining -convert-nvvm-to-llvm -convert-nvgpu-to-nvvm -convert-scf-to-cf -convert-vector-to-llvm -convert-index-to-llvm=index-bitwidth=32 -convert-arith-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm -expand-strided-metadata --nvvm-attach-target="module=main_kernel features=+ptx80 chip=sm_90 O=3"
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

// CHECK: [GPU] TMA BEFORE lhs[45][7] 0.000000
// CHECK: [GPU] TMA BEFORE rhs[7][0] 0.000000
// CHECK: [GPU] TMA LOADED lhs[45][7] 7.000000
// CHECK: [GPU] TMA LOADED rhs[7][0] 3.000000

module @mymod {
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
    %cast = memref.cast %memref : memref<64x8xf32> to memref<*xf32>
    %cast_3 = memref.cast %memref_1 : memref<8x128xf32> to memref<*xf32>
    %3 = nvgpu.tma.create.descriptor %cast box[%c64, %c8] : memref<*xf32> -> <tensor = memref<64x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
    %4 = nvgpu.tma.create.descriptor %cast_3 box[%c8, %c128] : memref<*xf32> -> <tensor = memref<8x128xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
    gpu.launch blocks(%arg0, %arg1, %arg2) in (%arg6 = %c1, %arg7 = %c1, %arg8 = %c1) threads(%arg3, %arg4, %arg5) in (%arg9 = %c128, %arg10 = %c1, %arg11 = %c1) {
      %5 = gpu.block_dim  x
      %6 = gpu.thread_id  x
      %7 = memref.get_global @bufferLhsGlobal : memref<64x8xf32, 3>
      %8 = memref.get_global @bufferRhsGlobal : memref<8x128xf32, 3>
      %9 = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
      nvgpu.mbarrier.init %9[%c0], %5 : <memorySpace = #gpu.address_space<workgroup>>
      gpu.barrier
      %10 = arith.cmpi eq, %6, %c0 : index
      scf.if %10 {
        nvgpu.mbarrier.arrive.expect_tx %9[%c0], %c6144 : <memorySpace = #gpu.address_space<workgroup>>
        %11 = memref.load %7[%c0, %c0] : memref<64x8xf32, 3>
        %12 = memref.load %8[%c0, %c0] : memref<8x128xf32, 3>
        gpu.printf "[GPU] TMA BEFORE lhs[45][7] %f\0A", %11 : f32
        gpu.printf "[GPU] TMA BEFORE rhs[7][0] %f\0A", %12 : f32
        nvgpu.tma.async.load %3[%c0, %c0], %9[%c0] to %7 : <tensor = memref<64x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>> -> memref<64x8xf32, 3>
        nvgpu.tma.async.load %4[%c0, %c0], %9[%c0] to %8 : <tensor = memref<8x128xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>> -> memref<8x128xf32, 3>
      } else {
        nvgpu.mbarrier.arrive.expect_tx %9[%c0], %c0 : <memorySpace = #gpu.address_space<workgroup>>
      }
      %phase = arith.constant 0 : i1
      nvgpu.mbarrier.try_wait.parity %9[%c0], %phase, %c10000000 : <memorySpace = #gpu.address_space<workgroup>>
      scf.if %10 {
        %11 = memref.load %7[%c45, %c7] : memref<64x8xf32, 3>
        %12 = memref.load %8[%c7, %c0] : memref<8x128xf32, 3>
        gpu.printf "[GPU] TMA LOADED lhs[45][7] %f\0A", %11 : f32
        gpu.printf "[GPU] TMA LOADED rhs[7][0] %f\0A", %12 : f32
      }
      gpu.terminator
    }
    return
  }
}
