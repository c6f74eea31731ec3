// From LLVM: mlir/test/Integration/GPU/CUDA/subgroup-reduce-redux.mlir
// as of llvm/llvm-project commit 66477f144c172937013fd652d6d73033ac62c2eb.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// A compiler test (it checks the PTX; nothing runs on a device): that gpu-lower-to-nvvm-pipeline turns a
// uniform gpu.subgroup_reduce into redux.sync for sm_80. MLIR 22's pipeline does not lower
// gpu.subgroup_reduce at all ("failed to legalize operation 'gpu.subgroup_reduce'"; the program
// checks a later pipeline), so the test is not run (MGPU-UNSUPPORTED). The program is upstream's.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 cubin-format=isa" | FileCheck %s
// MGPU-UNSUPPORTED: MLIR 22's gpu-lower-to-nvvm-pipeline cannot lower gpu.subgroup_reduce (the redux.sync lowering is newer)
// MGPU-PIPELINE: -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_80 cubin-format=isa"
// MGPU-COMPILE-ONLY: CHECK

// A subgroup reduction the source states is executed by the whole subgroup
// becomes one redux.sync instruction, once the chip the pipeline serializes
// for is one that has it. Below sm_80 the pipeline still cannot lower the
// operation at all, since it runs no shuffle expansion either.

// CHECK: redux.sync.add.s32

gpu.module @kernels {
  gpu.func @reduce(%out: memref<32xi32>) kernel {
    %tid = gpu.thread_id x
    %v = arith.index_cast %tid : index to i32
    %r = gpu.subgroup_reduce add %v uniform : (i32) -> (i32)
    memref.store %r, %out[%tid] : memref<32xi32>
    gpu.return
  }
}
