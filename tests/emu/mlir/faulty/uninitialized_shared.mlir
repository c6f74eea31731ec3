// EXPECT-FINDINGS
// A faulty kernel: half the block fills its half of a shared buffer, then every thread reads
// the mirrored element, so threads 0..15 read elements 31..16 that nothing wrote. The output may look plausible on a GPU; the virtual device reads
// poison and its checker reports the read, so the runtime library fails the program.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --check-prefix=FINDING

// FINDING: checkers reported findings for kernel 'main_kernel'
// FINDING-SAME: uninit
// FINDING: exiting because of the findings above

module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<32xf32>
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
                       workgroup(%buf : memref<32xf32, #gpu.address_space<workgroup>>) {
      %c16 = arith.constant 16 : index
      %c31 = arith.constant 31 : index
      %low = arith.cmpi ult, %tx, %c16 : index
      scf.if %low {
        %one = arith.constant 1.0 : f32
        memref.store %one, %buf[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %m = arith.subi %c31, %tx : index
      %v = memref.load %buf[%m] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %v, %d[%tx] : memref<32xf32>
      gpu.terminator
    }
    gpu.wait [%t2]
    return
  }
}
