// gpu.all_reduce over f32 in two blocks of 128 threads (4 warps), with the built-in
// operations and a custom reduction region; each block reduces its own values.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// Block b, thread t: v = 0.5 * t + 100 * b (exact in f32).
// block 0: add = 0.5 * (127*128/2) = 4064, max = 63.5, min = 0,
//          custom max(|v - 10|) = |63.5 - 10| = 53.5 (|0 - 10| = 10 is smaller)
// block 1: add = 4064 + 128*100 = 16864, max = 163.5, min = 100, custom = 163.5 - 10 = 153.5
// CHECK: [4064,  63.5,  0,  53.5,  16864,  163.5,  100,  153.5]

module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c128 = arith.constant 128 : index
    %h = memref.alloc() : memref<2x4xf32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<2x4xf32>
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %ti = arith.index_cast %tx : index to i32
      %bi = arith.index_cast %bx : index to i32
      %tf = arith.sitofp %ti : i32 to f32
      %bf = arith.sitofp %bi : i32 to f32
      %half = arith.constant 0.5 : f32
      %hundred = arith.constant 100.0 : f32
      %a = arith.mulf %tf, %half : f32
      %b = arith.mulf %bf, %hundred : f32
      %v = arith.addf %a, %b : f32
      %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
      %max = gpu.all_reduce maxnumf %v uniform {} : (f32) -> f32
      %min = gpu.all_reduce minimumf %v uniform {} : (f32) -> f32
      %ten = arith.constant 10.0 : f32
      %dv = arith.subf %v, %ten : f32
      %adv = math.absf %dv : f32
      %custom = gpu.all_reduce %adv uniform {
      ^bb(%lhs : f32, %rhs : f32):
        %m = arith.maximumf %lhs, %rhs : f32
        gpu.yield %m : f32
      } : (f32) -> f32
      %is0 = arith.cmpi eq, %tx, %c0 : index
      scf.if %is0 {
        %i0 = arith.constant 0 : index
        %i1 = arith.constant 1 : index
        %i2 = arith.constant 2 : index
        %i3 = arith.constant 3 : index
        memref.store %sum, %d[%bx, %i0] : memref<2x4xf32>
        memref.store %max, %d[%bx, %i1] : memref<2x4xf32>
        memref.store %min, %d[%bx, %i2] : memref<2x4xf32>
        memref.store %custom, %d[%bx, %i3] : memref<2x4xf32>
      }
      gpu.terminator
    }
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<2x4xf32>, memref<2x4xf32>
    gpu.wait [%t3]
    %flat = memref.collapse_shape %h [[0, 1]] : memref<2x4xf32> into memref<8xf32>
    %u = memref.cast %flat : memref<8xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
