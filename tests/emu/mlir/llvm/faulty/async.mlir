// From LLVM: mlir/test/Integration/GPU/CUDA/async.mlir
// as of llvm/llvm-project commit 2811a388560edd7c9bd7136c42a47371ac09d3f2.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines (upstream's stages, with MLIR 22's pass names and options: the target is
// sm_90a PTX (format=isa), and the host is finalized with the passes MLIR 22 needs; mlir-runner with
// libmgpu_mlir_runtime, expecting the driver's refusal). The program is upstream's.
//
// EXPECT-FINDINGS below: the program waits on a CUDA event it has destroyed. -gpu-async-region
// forks the first async.execute's GPU token to two consumers by yielding it twice
// (`async.yield %memref, %2, %2`), and each consumer's `gpu.wait async [%token]` lowers to
// cuStreamWaitEvent then cuEventDestroy of the one event the token became: the second consumer
// waits on, then destroys, an event the first destroyed. CUDA Driver API, cuEventDestroy:
// "Destroys the event specified by hEvent"; a destroyed handle is no event (CUDA_ERROR_INVALID_HANDLE).
// Upstream's runtime wrappers report such errors and go on (CUDA_REPORT_IF_ERROR), so FileCheck
// passes there; ours stop at the first. Until 2026-11-28 the virtual driver took any event handle
// and this program passed (battery round 19, F33).
// EXPECT-FINDINGS
// FINDING: CUDA_ERROR_INVALID_HANDLE
// FINDING: unknown event handle (never created, or destroyed)
// RUN: mlir-opt %s -gpu-kernel-outlining \
// RUN: | mlir-opt -pass-pipeline='builtin.module(gpu.module(strip-debuginfo,convert-gpu-to-nvvm),nvvm-attach-target{chip=sm_90a features=+ptx80})' \
// RUN: | mlir-opt -gpu-async-region -gpu-to-llvm -reconcile-unrealized-casts -gpu-module-to-binary=format=isa \
// RUN: | mlir-opt -async-to-async-runtime -async-runtime-ref-counting \
// RUN: | mlir-opt -convert-async-to-llvm -convert-func-to-llvm -convert-arith-to-llvm -convert-cf-to-llvm -finalize-memref-to-llvm -reconcile-unrealized-casts \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_async_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void -O0 2>&1 \
// RUN: | FileCheck %s --check-prefix=FINDING
// MGPU-PIPELINE: -gpu-kernel-outlining
// MGPU-PIPELINE: -pass-pipeline='builtin.module(gpu.module(strip-debuginfo,convert-gpu-to-nvvm),nvvm-attach-target{chip=sm_90a features=+ptx80})'
// MGPU-PIPELINE: -gpu-async-region -gpu-to-llvm -reconcile-unrealized-casts -gpu-module-to-binary=format=isa
// MGPU-PIPELINE: -async-to-async-runtime -async-runtime-ref-counting
// MGPU-PIPELINE: -convert-async-to-llvm -convert-func-to-llvm -convert-arith-to-llvm -convert-cf-to-llvm -finalize-memref-to-llvm -reconcile-unrealized-casts
// MGPU-SHARED-LIB: mlir_async_runtime
// MGPU-RUNNER-ARGS: -O0

func.func @main() {
  %c0    = arith.constant 0 : index
  %c1    = arith.constant 1 : index
  %count = arith.constant 2 : index

  // initialize h0 on host
  %h0 = memref.alloc(%count) : memref<?xi32>
  %h0_unranked = memref.cast %h0 : memref<?xi32> to memref<*xi32>
  gpu.host_register %h0_unranked : memref<*xi32>

  %v0 = arith.constant 42 : i32
  memref.store %v0, %h0[%c0] : memref<?xi32>
  memref.store %v0, %h0[%c1] : memref<?xi32>

  // copy h0 to b0 on device.
  %t0, %f0 = async.execute () -> !async.value<memref<?xi32>> {
    %b0 = gpu.alloc(%count) : memref<?xi32>
    gpu.memcpy %b0, %h0 : memref<?xi32>, memref<?xi32>
    async.yield %b0 : memref<?xi32>
  }

  // copy h0 to b1 and b2 (fork)
  %t1, %f1 = async.execute [%t0] (
    %f0 as %b0 : !async.value<memref<?xi32>>
  ) -> !async.value<memref<?xi32>> {
    %b1 = gpu.alloc(%count) : memref<?xi32>
    gpu.memcpy %b1, %b0 : memref<?xi32>, memref<?xi32>
    async.yield %b1 : memref<?xi32>
  }
  %t2, %f2 = async.execute [%t0] (
    %f0 as %b0 : !async.value<memref<?xi32>>
  ) -> !async.value<memref<?xi32>> {
    %b2 = gpu.alloc(%count) : memref<?xi32>
    gpu.memcpy %b2, %b0 : memref<?xi32>, memref<?xi32>
    async.yield %b2 : memref<?xi32>
  }

  // h0 = b1 + b2 (join).
  %t3 = async.execute [%t1, %t2] (
    %f1 as %b1 : !async.value<memref<?xi32>>,
    %f2 as %b2 : !async.value<memref<?xi32>>
  ) {
    gpu.launch blocks(%bx, %by, %bz) in (%grid_x = %c1, %grid_y = %c1, %grid_z = %c1)
               threads(%tx, %ty, %tz) in (%block_x = %count, %block_y = %c1, %block_z = %c1) {
      %v1 = memref.load %b1[%tx] : memref<?xi32>
      %v2 = memref.load %b2[%tx] : memref<?xi32>
      %sum = arith.addi %v1, %v2 : i32
      memref.store %sum, %h0[%tx] : memref<?xi32>
      gpu.terminator
    }
    async.yield
  }

  async.await %t3 : !async.token
  // CHECK: [84, 84]
  call @printMemrefI32(%h0_unranked) : (memref<*xi32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
