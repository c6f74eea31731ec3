// gpu.all_reduce over the 96 threads of a 32x3 block with the integer operations; every
// thread writes its view of each result, so a thread that saw a different value shows up.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// v = 1 + tid.x + 32*tid.y = 1..96: add = 96*97/2, and = 0, or = 127, xor(1..96) = 96 (96 = 0 mod 4),
// max = 96, min = 1, minui over 200 - v = 200 - 96 = 104.
// CHECK: add 4656 and 0 or 127 xor 96 max 96 min 1 minui 104
// CHECK: [4656,  0,  127,  96,  96,  1,  104]
// CHECK: disagreements 0

module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %c32 = arith.constant 32 : index
    %h = memref.alloc() : memref<7xi32>
    %hbad = memref.alloc() : memref<1xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<7xi32>
    %bad, %t2 = gpu.alloc async [%t1] () : memref<1xi32>
    %zero = arith.constant 0 : i32
    %t3 = gpu.memset async [%t2] %bad, %zero : memref<1xi32>, i32
    %t4 = gpu.launch async [%t3] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c3, %sz = %c1) {
      %row = arith.muli %ty, %c32 : index
      %lin = arith.addi %row, %tx : index
      %l = arith.index_cast %lin : index to i32
      %one = arith.constant 1 : i32
      %v = arith.addi %l, %one : i32
      %add = gpu.all_reduce add %v uniform {} : (i32) -> i32
      %and = gpu.all_reduce and %v uniform {} : (i32) -> i32
      %or = gpu.all_reduce or %v uniform {} : (i32) -> i32
      %xor = gpu.all_reduce xor %v uniform {} : (i32) -> i32
      %max = gpu.all_reduce maxsi %v uniform {} : (i32) -> i32
      %min = gpu.all_reduce minsi %v uniform {} : (i32) -> i32
      %c200 = arith.constant 200 : i32
      %w = arith.subi %c200, %v : i32
      %minu = gpu.all_reduce minui %w uniform {} : (i32) -> i32
      %is0 = arith.cmpi eq, %lin, %c0 : index
      scf.if %is0 {
        gpu.printf "add %d and %d or %d xor %d max %d min %d minui %d\n", %add, %and, %or, %xor, %max, %min, %minu : i32, i32, i32, i32, i32, i32, i32
        %i0 = arith.constant 0 : index
        %i1 = arith.constant 1 : index
        %i2 = arith.constant 2 : index
        %i3 = arith.constant 3 : index
        %i4 = arith.constant 4 : index
        %i5 = arith.constant 5 : index
        %i6 = arith.constant 6 : index
        memref.store %add, %d[%i0] : memref<7xi32>
        memref.store %and, %d[%i1] : memref<7xi32>
        memref.store %or, %d[%i2] : memref<7xi32>
        memref.store %xor, %d[%i3] : memref<7xi32>
        memref.store %max, %d[%i4] : memref<7xi32>
        memref.store %min, %d[%i5] : memref<7xi32>
        memref.store %minu, %d[%i6] : memref<7xi32>
      }
      // Every thread must have received the same sum.
      %c4656 = arith.constant 4656 : i32
      %wrong = arith.cmpi ne, %add, %c4656 : i32
      scf.if %wrong {
        %r = memref.atomic_rmw addi %one, %bad[%c0] : (i32, memref<1xi32>) -> i32
      }
      gpu.terminator
    }
    %t5 = gpu.memcpy async [%t4] %h, %d : memref<7xi32>, memref<7xi32>
    %t6 = gpu.memcpy async [%t5] %hbad, %bad : memref<1xi32>, memref<1xi32>
    gpu.wait [%t6]
    %u = memref.cast %h : memref<7xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    %nbad = memref.load %hbad[%c0] : memref<1xi32>
    vector.print str "disagreements "
    vector.print %nbad : i32
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
