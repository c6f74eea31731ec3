// From LLVM: mlir/test/Integration/GPU/CUDA/concurrent-kernels.mlir
// as of llvm/llvm-project commit 1e66a9b5a7b555ce003dcf2e7bfde346ddf7144f.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines (mlir-runner with libmgpu_mlir_runtime, PTX for sm_90a); the program is upstream's.
// 
// EXPECT-FINDINGS below: the program relies on its two single-thread kernels, launched on two streams,
// running at the same time -- each spins until both have incremented the counter. CUDA never promises
// that (CUDA C++ Programming Guide, "Concurrent Kernel Execution": kernels of different streams *may*
// run concurrently), so on a busy or a one-kernel-at-a-time device it never ends. The virtual device
// runs each launch to completion, so the first kernel spins alone and is stopped as a step-limit
// finding (MGPU_EMU_STEP_LIMIT is lowered so that it is stopped quickly).
// EXPECT-FINDINGS
// MGPU-ENV: MGPU_EMU_STEP_LIMIT=200000
// FINDING: step-limit
// FINDING: checkers reported findings for kernel 'kernel'
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --check-prefix=FINDING

module attributes {gpu.container_module} {
    gpu.module @kernels {
        gpu.func @kernel(%memref: memref<i32>) kernel {
            %c0 = arith.constant 0 : i32
            %c1 = arith.constant 1 : i32
            %c2 = arith.constant 2 : i32
            %block = memref.atomic_rmw addi %c1, %memref[] : (i32, memref<i32>) -> i32
            scf.while: () -> () {
                %value = memref.atomic_rmw addi %c0, %memref[] : (i32, memref<i32>) -> i32
                %cond = arith.cmpi slt, %value, %c2 : i32
                scf.condition(%cond)
            } do {
                scf.yield
            }
            gpu.return
        }
    }

    func.func @main() {
        %memref = gpu.alloc host_shared () : memref<i32>
        %c0 = arith.constant 0 : i32
        memref.store %c0, %memref[] : memref<i32>

        %0 = gpu.wait async
        %1 = gpu.wait async
        %c1 = arith.constant 1 : index
        %2 = gpu.launch_func async [%0] @kernels::@kernel
            blocks in (%c1, %c1, %c1)
            threads in (%c1, %c1, %c1)
            args(%memref: memref<i32>)
        %3 = gpu.launch_func async [%1] @kernels::@kernel
            blocks in (%c1, %c1, %c1)
            threads in (%c1, %c1, %c1)
            args(%memref: memref<i32>)
        gpu.wait [%2, %3]
        return
    }
}
