// From LLVM: mlir/test/Integration/GPU/CUDA/assert.mlir
// as of llvm/llvm-project commit 5d4d7c161e7d6714eb33a4fe247796ea627fb3e9.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines (mlir-runner with libmgpu_mlir_runtime, PTX for sm_90a) and, for MLIR 22's
// gpu.printf syntax, a comma after each format string. The program and its CHECK lines are upstream's.
// 
// EXPECT-FINDINGS below: the kernel's second assertion fails on purpose. As CUDA's device runtime
// does, each failing thread prints its assertion line and the kernel stops (upstream checks those
// lines, and that nothing after the assertion is printed); the virtual device also reports the
// failed assertion as a finding with its message, file and line (the driver answers the launch
// with CUDA_ERROR_ASSERT), so the program fails.
// EXPECT-FINDINGS
// MGPU-CHECK-OUTPUT
// FINDING: trap: device assertion failed: `failing assertion` at callee_file.cc:7 in callee_func_name (2 threads of this warp
// FINDING: exiting because of the findings above
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --check-prefixes=CHECK,FINDING

// CHECK-DAG: thread 0: print after passing assertion
// CHECK-DAG: thread 1: print after passing assertion
// CHECK-DAG: callee_file.cc:7: callee_func_name: block: [0,0,0], thread: [0,0,0] Assertion `failing assertion` failed.
// CHECK-DAG: callee_file.cc:7: callee_func_name: block: [0,0,0], thread: [1,0,0] Assertion `failing assertion` failed.
// CHECK-NOT: print after failing assertion

module attributes {gpu.container_module} {
gpu.module @kernels {
gpu.func @test_assert(%c0: i1, %c1: i1) kernel {
  %0 = gpu.thread_id x
  cf.assert %c1, "passing assertion"
  gpu.printf "thread %lld: print after passing assertion\n", %0 : index
  // Test callsite(callsite(name)) location.
  cf.assert %c0, "failing assertion" loc(callsite(callsite("callee_func_name"("callee_file.cc":7:9) at "caller_file.cc":10:8) at "caller2_file.cc":11:12))
  gpu.printf "thread %lld: print after failing assertion\n", %0 : index
  gpu.return
}
}

func.func @main() {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c0_i1 = arith.constant 0 : i1
  %c1_i1 = arith.constant 1 : i1
  gpu.launch_func @kernels::@test_assert
      blocks in (%c1, %c1, %c1)
      threads in (%c2, %c1, %c1)
      args(%c0_i1 : i1, %c1_i1 : i1)
  return
}
}
