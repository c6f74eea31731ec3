// gpu.printf from the device: integers of both widths, signed and unsigned, floats (promoted
// to double as C varargs are), hex, characters and strings, from one warp in lane order.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// (%#x prints a zero without the 0x prefix, as C does.)
// CHECK: lane 0: i32 0 u32 4294967295 i64 0 f32 0.000000 f64 0.000 hex 0 %
// CHECK-NEXT: lane 1: i32 -7 u32 4294967294 i64 1099511627776 f32 1.500000 f64 3.142 hex 0x1 %
// CHECK-NEXT: lane 2: i32 -14 u32 4294967293 i64 2199023255552 f32 3.000000 f64 6.283 hex 0x2 %
// CHECK-NEXT: lane 3: i32 -21 u32 4294967292 i64 3298534883328 f32 4.500000 f64 9.425 hex 0x3 %
// CHECK-NEXT: done
// CHECK-NOT: lane

module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %l = arith.index_cast %tx : index to i32
      %m7 = arith.constant -7 : i32
      %i = arith.muli %l, %m7 : i32
      %m1 = arith.constant -1 : i32
      %u = arith.subi %m1, %l : i32
      %l64 = arith.extui %l : i32 to i64
      %c40 = arith.constant 40 : i64
      %big = arith.shli %l64, %c40 : i64
      %lf = arith.uitofp %l : i32 to f32
      %h = arith.constant 1.5 : f32
      %f = arith.mulf %lf, %h : f32
      %ld = arith.uitofp %l : i32 to f64
      %pi = arith.constant 3.14159265358979 : f64
      %d = arith.mulf %ld, %pi : f64
      gpu.printf "lane %d: i32 %d u32 %u i64 %lld f32 %f f64 %.3f hex %#x %%\n", %l, %i, %u, %big, %f, %d, %l : i32, i32, i32, i64, f32, f64, i32
      gpu.terminator
    }
    %t = gpu.wait async
    gpu.wait [%t]
    vector.print str "done\n"
    return
  }
}
