// Elementwise float and integer arithmetic: 4 blocks of 4 threads, one element each.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// f[i] = max(2*i - 5, 0) + fma(i, 0.5, 0.25)  (i = 0..15)
// CHECK: [0.25,  0.75,  1.25,  2.75,  5.25,  7.75,  10.25,  12.75,  15.25,  17.75,  20.25,  22.75,  25.25,  27.75,  30.25,  32.75]
// n[i] = ((i * i) remui 7) xori 3, then shifted left by (i andi 1)
// i*i mod 7 = 0 1 4 2 2 4 1 0 1 4 2 2 4 1 0 1; xor 3 = 3 2 7 1 1 7 2 3 2 7 1 1 7 2 3 2; odd i doubled
// CHECK: [3,  4,  7,  2,  1,  14,  2,  6,  2,  14,  1,  2,  7,  4,  3,  4]
// s[i] = i < 8 ? -i : i divsi 3
// CHECK: [0,  -1,  -2,  -3,  -4,  -5,  -6,  -7,  2,  3,  3,  3,  4,  4,  4,  5]

module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %hf = memref.alloc() : memref<16xf32>
    %hn = memref.alloc() : memref<16xi32>
    %hs = memref.alloc() : memref<16xi32>
    %t0 = gpu.wait async
    %df, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %dn, %t2 = gpu.alloc async [%t1] () : memref<16xi32>
    %ds, %t3 = gpu.alloc async [%t2] () : memref<16xi32>
    %t4 = gpu.launch async [%t3] blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %bdim = gpu.block_dim x
      %base = arith.muli %bx, %bdim : index
      %gi = arith.addi %base, %tx : index
      %i = arith.index_cast %gi : index to i32
      %fi = arith.sitofp %i : i32 to f32
      %two = arith.constant 2.0 : f32
      %five = arith.constant 5.0 : f32
      %zero = arith.constant 0.0 : f32
      %half = arith.constant 0.5 : f32
      %quarter = arith.constant 0.25 : f32
      %a = arith.mulf %fi, %two : f32
      %b = arith.subf %a, %five : f32
      %r = arith.maxnumf %b, %zero : f32
      %m = math.fma %fi, %half, %quarter : f32
      %f = arith.addf %r, %m : f32
      memref.store %f, %df[%gi] : memref<16xf32>
      %c7 = arith.constant 7 : i32
      %c3 = arith.constant 3 : i32
      %c1i = arith.constant 1 : i32
      %sq = arith.muli %i, %i : i32
      %rem = arith.remui %sq, %c7 : i32
      %x = arith.xori %rem, %c3 : i32
      %odd = arith.andi %i, %c1i : i32
      %n = arith.shli %x, %odd : i32
      memref.store %n, %dn[%gi] : memref<16xi32>
      %c8 = arith.constant 8 : i32
      %c0i = arith.constant 0 : i32
      %lt = arith.cmpi slt, %i, %c8 : i32
      %neg = arith.subi %c0i, %i : i32
      %div = arith.divsi %i, %c3 : i32
      %s = arith.select %lt, %neg, %div : i32
      memref.store %s, %ds[%gi] : memref<16xi32>
      gpu.terminator
    }
    %t5 = gpu.memcpy async [%t4] %hf, %df : memref<16xf32>, memref<16xf32>
    %t6 = gpu.memcpy async [%t5] %hn, %dn : memref<16xi32>, memref<16xi32>
    %t7 = gpu.memcpy async [%t6] %hs, %ds : memref<16xi32>, memref<16xi32>
    gpu.wait [%t7]
    %uf = memref.cast %hf : memref<16xf32> to memref<*xf32>
    %un = memref.cast %hn : memref<16xi32> to memref<*xi32>
    %us = memref.cast %hs : memref<16xi32> to memref<*xi32>
    call @printMemrefF32(%uf) : (memref<*xf32>) -> ()
    call @printMemrefI32(%un) : (memref<*xi32>) -> ()
    call @printMemrefI32(%us) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefI32(memref<*xi32>)
}
