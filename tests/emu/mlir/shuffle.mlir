// gpu.shuffle xor / down / up / idx in one warp, with the validity flag: a lane whose source
// is outside the width stores -1.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// Lane l holds v = 10 * l.
// row 0, xor 5, width 32: v(l ^ 5)
// CHECK:      [50,   40,   70,   60,   10,   0,   30,   20,   130,   120,   150,   140,   90,   80,   110,   100,   210,   200,   230,   220,   170,   160,   190,   180,   290,   280,   310,   300,   250,   240,   270,   260]
// row 1, down 3, width 32: v(l + 3), invalid for l >= 29
// CHECK-NEXT: [30,   40,   50,   60,   70,   80,   90,   100,   110,   120,   130,   140,   150,   160,   170,   180,   190,   200,   210,   220,   230,   240,   250,   260,   270,   280,   290,   300,   310,   -1,   -1,   -1]
// row 2, up 2, width 32: v(l - 2), invalid for l < 2
// (MLIR's width is the number of active lanes -- membermask (1 << width) - 1 -- not a segment,
// so every lane of the warp must take part: width 32.)
// CHECK-NEXT: [-1,   -1,   0,   10,   20,   30,   40,   50,   60,   70,   80,   90,   100,   110,   120,   130,   140,   150,   160,   170,   180,   190,   200,   210,   220,   230,   240,   250,   260,   270,   280,   290]
// row 3, idx (l * 7) mod 32, width 32: v((7 l) mod 32)
// CHECK-NEXT: [0,   70,   140,   210,   280,   30,   100,   170,   240,   310,   60,   130,   200,   270,   20,   90,   160,   230,   300,   50,   120,   190,   260,   10,   80,   150,   220,   290,   40,   110,   180,   250]

module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %h = memref.alloc() : memref<4x32xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<4x32xi32>
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %l = arith.index_cast %tx : index to i32
      %c10 = arith.constant 10 : i32
      %v = arith.muli %l, %c10 : i32
      %w32 = arith.constant 32 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c5 = arith.constant 5 : i32
      %c7 = arith.constant 7 : i32
      %c31 = arith.constant 31 : i32
      %m1 = arith.constant -1 : i32
      %x, %xv = gpu.shuffle xor %v, %c5, %w32 : i32
      %dn, %dnv = gpu.shuffle down %v, %c3, %w32 : i32
      %up, %upv = gpu.shuffle up %v, %c2, %w32 : i32
      %l7 = arith.muli %l, %c7 : i32
      %src = arith.andi %l7, %c31 : i32
      %ix, %ixv = gpu.shuffle idx %v, %src, %w32 : i32
      %rx = arith.select %xv, %x, %m1 : i32
      %rdn = arith.select %dnv, %dn, %m1 : i32
      %rup = arith.select %upv, %up, %m1 : i32
      %rix = arith.select %ixv, %ix, %m1 : i32
      %r0 = arith.constant 0 : index
      %r1 = arith.constant 1 : index
      %r2 = arith.constant 2 : index
      %r3 = arith.constant 3 : index
      memref.store %rx, %d[%r0, %tx] : memref<4x32xi32>
      memref.store %rdn, %d[%r1, %tx] : memref<4x32xi32>
      memref.store %rup, %d[%r2, %tx] : memref<4x32xi32>
      memref.store %rix, %d[%r3, %tx] : memref<4x32xi32>
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<4x32xi32>, memref<4x32xi32>
    gpu.wait [%t3]
    %u = memref.cast %h : memref<4x32xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
