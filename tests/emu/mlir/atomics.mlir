// Atomics on global and shared memory from 4 blocks of 64 threads: integer add / max / min,
// float add, and memref.generic_atomic_rmw (a compare-and-swap loop) multiplying.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// g = 64 * b + t over 256 threads:
//   [0] count        = 256
//   [1] sum of g     = 255 * 256 / 2 = 32640
//   [2] max of g     = 255
//   [3] min of 1000-g = 745
//   [4] per-block shared-memory counts added to global: 4 * 64 = 256
//   [5] CAS product: starts at 1, threads with g < 10 multiply by 2 -> 1024
// CHECK: [256,  32640,  255,  745,  256,  1024]
// float add of 0.25 by every thread: 64
// CHECK: [64]

module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %hi = memref.alloc() : memref<6xi32>
    %hf = memref.alloc() : memref<1xf32>
    %z = arith.constant 0 : i32
    %big = arith.constant 1000000 : i32
    %one = arith.constant 1 : i32
    %c2i = arith.constant 2 : index
    %c3i = arith.constant 3 : index
    %c5i = arith.constant 5 : index
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %z, %hi[%i] : memref<6xi32>
    }
    memref.store %big, %hi[%c3i] : memref<6xi32>
    memref.store %z, %hi[%c4] : memref<6xi32>
    memref.store %one, %hi[%c5i] : memref<6xi32>
    %t0 = gpu.wait async
    %di, %t1 = gpu.alloc async [%t0] () : memref<6xi32>
    %df, %t2 = gpu.alloc async [%t1] () : memref<1xf32>
    %t3 = gpu.memcpy async [%t2] %di, %hi : memref<6xi32>, memref<6xi32>
    %fz = arith.constant 0.0 : f32
    %t4 = gpu.memset async [%t3] %df, %fz : memref<1xf32>, f32
    %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
                       workgroup(%cnt : memref<1xi32, #gpu.address_space<workgroup>>) {
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        %zero = arith.constant 0 : i32
        memref.store %zero, %cnt[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %base = arith.muli %bx, %c64 : index
      %gidx = arith.addi %base, %tx : index
      %g = arith.index_cast %gidx : index to i32
      %k1 = arith.constant 1 : i32
      %k1000 = arith.constant 1000 : i32
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      %i2 = arith.constant 2 : index
      %i3 = arith.constant 3 : index
      %i4 = arith.constant 4 : index
      %i5 = arith.constant 5 : index
      %a0 = memref.atomic_rmw addi %k1, %di[%i0] : (i32, memref<6xi32>) -> i32
      %a1 = memref.atomic_rmw addi %g, %di[%i1] : (i32, memref<6xi32>) -> i32
      %a2 = memref.atomic_rmw maxs %g, %di[%i2] : (i32, memref<6xi32>) -> i32
      %inv = arith.subi %k1000, %g : i32
      %a3 = memref.atomic_rmw mins %inv, %di[%i3] : (i32, memref<6xi32>) -> i32
      %s = memref.atomic_rmw addi %k1, %cnt[%i0] : (i32, memref<1xi32, #gpu.address_space<workgroup>>) -> i32
      %quarter = arith.constant 0.25 : f32
      %af = memref.atomic_rmw addf %quarter, %df[%i0] : (f32, memref<1xf32>) -> f32
      %k10 = arith.constant 10 : i32
      %small = arith.cmpi slt, %g, %k10 : i32
      scf.if %small {
        %old = memref.generic_atomic_rmw %di[%i5] : memref<6xi32> {
        ^bb0(%cur : i32):
          %k2 = arith.constant 2 : i32
          %n = arith.muli %cur, %k2 : i32
          memref.atomic_yield %n : i32
        }
      }
      gpu.barrier
      scf.if %first {
        %blockcount = memref.load %cnt[%i0] : memref<1xi32, #gpu.address_space<workgroup>>
        %a4 = memref.atomic_rmw addi %blockcount, %di[%i4] : (i32, memref<6xi32>) -> i32
      }
      gpu.terminator
    }
    %t6 = gpu.memcpy async [%t5] %hi, %di : memref<6xi32>, memref<6xi32>
    %t7 = gpu.memcpy async [%t6] %hf, %df : memref<1xf32>, memref<1xf32>
    gpu.wait [%t7]
    %ui = memref.cast %hi : memref<6xi32> to memref<*xi32>
    %uf = memref.cast %hf : memref<1xf32> to memref<*xf32>
    call @printMemrefI32(%ui) : (memref<*xi32>) -> ()
    call @printMemrefF32(%uf) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printMemrefF32(memref<*xf32>)
}
