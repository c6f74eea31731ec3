// TMA without swizzle: two tiled loads (a 64x8 and an 8x32 f32 box) into shared memory,
// completed on one mbarrier with expect_tx; then the block copies shared memory out.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// lhs is 128x8 with lhs[r][c] = 10 r + c; the box at row 64 holds rows 64..127.
// rhs is 8x64 with rhs[r][c] = 1000 + 100 r + c; the box at column 32 holds columns 32..63.
// Bytes: 64*8*4 + 8*32*4 = 2048 + 1024 = 3072.
// CHECK: lhs[0][0] 640 lhs[45][7] 1097 lhs[63][3] 1273
// CHECK: rhs[0][0] 1032 rhs[7][31] 1763 rhs[5][4] 1536
// Sum: lhs box 80 * (64 + .. + 127) + 64 * (0 + .. + 7) = 80 * 6112 + 1792 = 490752;
//      rhs box 256 * 1000 + 3200 * (0 + .. + 7) + 8 * (32 + .. + 63) = 256000 + 89600 + 12160 = 357760.
// CHECK: sum 848512

module attributes {gpu.container_module} {
  memref.global "private" @lhs_smem : memref<64x8xf32, 3> {alignment = 128}
  memref.global "private" @rhs_smem : memref<8x32xf32, 3> {alignment = 128}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %hl = memref.alloc() : memref<128x8xf32>
    %hr = memref.alloc() : memref<8x64xf32>
    scf.for %r = %c0 to %c128 step %c1 {
      scf.for %c = %c0 to %c8 step %c1 {
        %r10 = arith.muli %r, %c8 : index
        %r10b = arith.addi %r10, %r : index
        %r10c = arith.addi %r10b, %r : index
        %v = arith.addi %r10c, %c : index
        %vi = arith.index_cast %v : index to i32
        %vf = arith.sitofp %vi : i32 to f32
        memref.store %vf, %hl[%r, %c] : memref<128x8xf32>
      }
    }
    scf.for %r = %c0 to %c8 step %c1 {
      scf.for %c = %c0 to %c64 step %c1 {
        %k100 = arith.constant 100 : index
        %k1000 = arith.constant 1000 : index
        %r100 = arith.muli %r, %k100 : index
        %a = arith.addi %r100, %k1000 : index
        %v = arith.addi %a, %c : index
        %vi = arith.index_cast %v : index to i32
        %vf = arith.sitofp %vi : i32 to f32
        memref.store %vf, %hr[%r, %c] : memref<8x64xf32>
      }
    }
    %hout = memref.alloc() : memref<64x8xf32>
    %hout2 = memref.alloc() : memref<8x32xf32>
    %t0 = gpu.wait async
    %dl, %t1 = gpu.alloc async [%t0] () : memref<128x8xf32>
    %dr, %t2 = gpu.alloc async [%t1] () : memref<8x64xf32>
    %do, %t3 = gpu.alloc async [%t2] () : memref<64x8xf32>
    %do2, %t4 = gpu.alloc async [%t3] () : memref<8x32xf32>
    %t5 = gpu.memcpy async [%t4] %dl, %hl : memref<128x8xf32>, memref<128x8xf32>
    %t6 = gpu.memcpy async [%t5] %dr, %hr : memref<8x64xf32>, memref<8x64xf32>
    gpu.wait [%t6]
    %ul = memref.cast %dl : memref<128x8xf32> to memref<*xf32>
    %ur = memref.cast %dr : memref<8x64xf32> to memref<*xf32>
    %ml = nvgpu.tma.create.descriptor %ul box[%c64, %c8] : memref<*xf32> -> !nvgpu.tensormap.descriptor<tensor = memref<64x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
    %mr = nvgpu.tma.create.descriptor %ur box[%c8, %c32] : memref<*xf32> -> !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
    %t7 = gpu.wait async
    %t8 = gpu.launch async [%t7] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %sl = memref.get_global @lhs_smem : memref<64x8xf32, 3>
      %sr = memref.get_global @rhs_smem : memref<8x32xf32, 3>
      %bar = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      %i0 = arith.constant 0 : index
      %one = arith.constant 1 : index
      %leader = arith.cmpi eq, %tx, %i0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%i0], %one : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      }
      gpu.barrier
      scf.if %leader {
        %bytes = arith.constant 3072 : index
        %row64 = arith.constant 64 : index
        %col32 = arith.constant 32 : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%i0], %bytes : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
        // Coordinates are innermost first: (column, row).
        nvgpu.tma.async.load %ml[%i0, %row64], %bar[%i0] to %sl : !nvgpu.tensormap.descriptor<tensor = memref<64x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> memref<64x8xf32, 3>
        nvgpu.tma.async.load %mr[%col32, %i0], %bar[%i0] to %sr : !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> memref<8x32xf32, 3>
      }
      %phase = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%i0], %phase, %ticks : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      // 128 threads copy 512 + 256 elements.
      %k8 = arith.constant 8 : index
      %k4 = arith.constant 4 : index
      %k32 = arith.constant 32 : index
      scf.for %j = %i0 to %k4 step %one {
        %k128 = arith.constant 128 : index
        %jb = arith.muli %j, %k128 : index
        %e = arith.addi %jb, %tx : index
        %r = arith.divui %e, %k8 : index
        %c = arith.remui %e, %k8 : index
        %v = memref.load %sl[%r, %c] : memref<64x8xf32, 3>
        memref.store %v, %do[%r, %c] : memref<64x8xf32>
      }
      scf.for %j = %i0 to %k4 step %one {
        %k64 = arith.constant 64 : index
        %jb = arith.muli %j, %k64 : index
        %half = arith.cmpi ult, %tx, %k64 : index
        scf.if %half {
          %e = arith.addi %jb, %tx : index
          %r = arith.divui %e, %k32 : index
          %c = arith.remui %e, %k32 : index
          %v = memref.load %sr[%r, %c] : memref<8x32xf32, 3>
          memref.store %v, %do2[%r, %c] : memref<8x32xf32>
        }
      }
      gpu.terminator
    }
    %t9 = gpu.memcpy async [%t8] %hout, %do : memref<64x8xf32>, memref<64x8xf32>
    %t10 = gpu.memcpy async [%t9] %hout2, %do2 : memref<8x32xf32>, memref<8x32xf32>
    gpu.wait [%t10]
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c31 = arith.constant 31 : index
    %c45 = arith.constant 45 : index
    %c63 = arith.constant 63 : index
    %a = memref.load %hout[%c0, %c0] : memref<64x8xf32>
    %b = memref.load %hout[%c45, %c7] : memref<64x8xf32>
    %c = memref.load %hout[%c63, %c3] : memref<64x8xf32>
    %d = memref.load %hout2[%c0, %c0] : memref<8x32xf32>
    %e = memref.load %hout2[%c7, %c31] : memref<8x32xf32>
    %f = memref.load %hout2[%c5, %c4] : memref<8x32xf32>
    %ai = arith.fptosi %a : f32 to i32
    %bi = arith.fptosi %b : f32 to i32
    %ci = arith.fptosi %c : f32 to i32
    %di = arith.fptosi %d : f32 to i32
    %ei = arith.fptosi %e : f32 to i32
    %fi = arith.fptosi %f : f32 to i32
    vector.print str "lhs[0][0] "
    vector.print %ai : i32 punctuation <no_punctuation>
    vector.print str " lhs[45][7] "
    vector.print %bi : i32 punctuation <no_punctuation>
    vector.print str " lhs[63][3] "
    vector.print %ci : i32
    vector.print str "rhs[0][0] "
    vector.print %di : i32 punctuation <no_punctuation>
    vector.print str " rhs[7][31] "
    vector.print %ei : i32 punctuation <no_punctuation>
    vector.print str " rhs[5][4] "
    vector.print %fi : i32
    // Sum of everything copied out, to catch a wrong element anywhere.
    %zero = arith.constant 0.0 : f32
    %s1 = scf.for %r = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %inner = scf.for %q = %c0 to %c8 step %c1 iter_args(%acc2 = %acc) -> (f32) {
        %v = memref.load %hout[%r, %q] : memref<64x8xf32>
        %n = arith.addf %acc2, %v : f32
        scf.yield %n : f32
      }
      scf.yield %inner : f32
    }
    %s2 = scf.for %r = %c0 to %c8 step %c1 iter_args(%acc = %s1) -> (f32) {
      %inner = scf.for %q = %c0 to %c32 step %c1 iter_args(%acc2 = %acc) -> (f32) {
        %v = memref.load %hout2[%r, %q] : memref<8x32xf32>
        %n = arith.addf %acc2, %v : f32
        scf.yield %n : f32
      }
      scf.yield %inner : f32
    }
    %si = arith.fptosi %s2 : f32 to i32
    vector.print str "sum "
    vector.print %si : i32
    return
  }
}
