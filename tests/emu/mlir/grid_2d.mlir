// A 2-D grid of 2-D blocks: 3x2 blocks of 4x2 threads cover a 4x12 array; each thread writes
// 100 * row + col together with the block and thread ids it saw.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// out[r][c] = 100 r + c
// CHECK:      [0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,   11],
// CHECK-NEXT: [100,   101,   102,   103,   104,   105,   106,   107,   108,   109,   110,   111],
// CHECK-NEXT: [200,   201,   202,   203,   204,   205,   206,   207,   208,   209,   210,   211],
// CHECK-NEXT: [300,   301,   302,   303,   304,   305,   306,   307,   308,   309,   310,   311]]
// ids[r][c] = 1000 block.y + 100 block.x + 10 thread.y + thread.x, with block.x = c / 4,
// thread.x = c mod 4, block.y = r / 2, thread.y = r mod 2
// CHECK:      [0,   1,   2,   3,   100,   101,   102,   103,   200,   201,   202,   203],
// CHECK-NEXT: [10,   11,   12,   13,   110,   111,   112,   113,   210,   211,   212,   213],
// CHECK-NEXT: [1000,   1001,   1002,   1003,   1100,   1101,   1102,   1103,   1200,   1201,   1202,   1203],
// CHECK-NEXT: [1010,   1011,   1012,   1013,   1110,   1111,   1112,   1113,   1210,   1211,   1212,   1213]]

module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %h = memref.alloc() : memref<4x12xi32>
    %hid = memref.alloc() : memref<4x12xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<4x12xi32>
    %did, %t2 = gpu.alloc async [%t1] () : memref<4x12xi32>
    %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c2, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c2, %sz = %c1) {
      %bdx = gpu.block_dim x
      %bdy = gpu.block_dim y
      %cx = arith.muli %bx, %bdx : index
      %col = arith.addi %cx, %tx : index
      %ry = arith.muli %by, %bdy : index
      %row = arith.addi %ry, %ty : index
      %c100 = arith.constant 100 : index
      %c10 = arith.constant 10 : index
      %c1000 = arith.constant 1000 : index
      %r100 = arith.muli %row, %c100 : index
      %v = arith.addi %r100, %col : index
      %vi = arith.index_cast %v : index to i32
      memref.store %vi, %d[%row, %col] : memref<4x12xi32>
      %p = arith.muli %by, %c1000 : index
      %q = arith.muli %bx, %c100 : index
      %s = arith.muli %ty, %c10 : index
      %pq = arith.addi %p, %q : index
      %pqs = arith.addi %pq, %s : index
      %id = arith.addi %pqs, %tx : index
      %idi = arith.index_cast %id : index to i32
      memref.store %idi, %did[%row, %col] : memref<4x12xi32>
      gpu.terminator
    }
    %t4 = gpu.memcpy async [%t3] %h, %d : memref<4x12xi32>, memref<4x12xi32>
    %t5 = gpu.memcpy async [%t4] %hid, %did : memref<4x12xi32>, memref<4x12xi32>
    gpu.wait [%t5]
    %u = memref.cast %h : memref<4x12xi32> to memref<*xi32>
    %uid = memref.cast %hid : memref<4x12xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    call @printMemrefI32(%uid) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
