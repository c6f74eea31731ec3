// EXPECT-FINDINGS
// A 64x64x64 GEMM on one warpgroup with wgmma (f16 x f16 -> f32): A and B come into
// 128B-swizzled shared memory by TMA, nvgpu.warpgroup.generate.descriptor makes the matrix
// descriptors, nvgpu.warpgroup.mma issues the four k16 steps, and the fragmented accumulator
// is stored straight to global memory after wgmma.wait_group 0.
// It computes the right tile, but MLIR 22's lowering of nvgpu.warpgroup.mma emits wgmma.fence
// first and the movs that zero the accumulator (nvgpu.warpgroup.mma.init.accumulator) after it,
// so ordinary instructions write the accumulator registers between the fence and the wgmma:
// PTX ISA 9.7.15.6 requires wgmma.fence between any other access to them and the
// wgmma.mma_async. (ptxas 13.0 accepts this PTX silently; where it sees such an access between
// two wgmmas it inserts the fence itself, info C7519.) The device must report it; the tile is
// still right, the runtime just stops before printing it (tests/emu/test_emu_kernels.cc checks
// wgmma's numbers).
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --check-prefix=FINDING

// FINDING: checkers reported findings for kernel 'main_kernel'
// FINDING-SAME: missing-wgmma-fence
// FINDING-SAME: (accumulator) was read or written by another instruction since this warp's last wgmma.fence
// FINDING: exiting because of the findings above

// A[m][k] = 1 where k = m or k = (m + 1) mod 64, else 0; B[k][n] = k + 2 n (exact in f16).
// So C[m][n] = B[m][n] + B[(m+1) mod 64][n] = m + ((m + 1) mod 64) + 4 n.
// C[0][0] = 0 + 1 = 1, C[63][1] = 63 + 0 + 4 = 67, C[10][5] = 10 + 11 + 20 = 41,
// C[31][63] = 31 + 32 + 252 = 315, C[62][33] = 62 + 63 + 132 = 257.
// (on a GPU) C 1 67 41 315 257
// Sum over m, n: 64 * (sum_m m + sum_m (m+1) mod 64) + 64 * 4 * sum_n n = 64 * 4032 + 256 * 2016 = 258048 + 516096
// (on a GPU) sum 774144

!tA = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bar = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>

module attributes {gpu.container_module} {
  memref.global "private" @a_smem : memref<64x64xf16, 3> {alignment = 1024}
  memref.global "private" @b_smem : memref<64x64xf16, 3> {alignment = 1024}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %ha = memref.alloc() : memref<64x64xf16>
    %hb = memref.alloc() : memref<64x64xf16>
    %hc = memref.alloc() : memref<64x64xf32>
    %f0 = arith.constant 0.0 : f16
    %f1 = arith.constant 1.0 : f16
    scf.for %m = %c0 to %c64 step %c1 {
      scf.for %k = %c0 to %c64 step %c1 {
        %m1 = arith.addi %m, %c1 : index
        %next = arith.remui %m1, %c64 : index
        %d0 = arith.cmpi eq, %k, %m : index
        %d1 = arith.cmpi eq, %k, %next : index
        %on = arith.ori %d0, %d1 : i1
        %a = arith.select %on, %f1, %f0 : f16
        memref.store %a, %ha[%m, %k] : memref<64x64xf16>
        %n2 = arith.muli %k, %c2 : index
        %bv = arith.addi %m, %n2 : index
        %bi = arith.index_cast %bv : index to i32
        %bf = arith.sitofp %bi : i32 to f16
        // B[k][n] with k = %m, n = %k here.
        memref.store %bf, %hb[%m, %k] : memref<64x64xf16>
      }
    }
    %t0 = gpu.wait async
    %da, %t1 = gpu.alloc async [%t0] () : memref<64x64xf16>
    %db, %t2 = gpu.alloc async [%t1] () : memref<64x64xf16>
    %dc, %t3 = gpu.alloc async [%t2] () : memref<64x64xf32>
    %t4 = gpu.memcpy async [%t3] %da, %ha : memref<64x64xf16>, memref<64x64xf16>
    %t5 = gpu.memcpy async [%t4] %db, %hb : memref<64x64xf16>, memref<64x64xf16>
    gpu.wait [%t5]
    %ua = memref.cast %da : memref<64x64xf16> to memref<*xf16>
    %ub = memref.cast %db : memref<64x64xf16> to memref<*xf16>
    %ma = nvgpu.tma.create.descriptor %ua box[%c64, %c64] : memref<*xf16> -> !tA
    %mb = nvgpu.tma.create.descriptor %ub box[%c64, %c64] : memref<*xf16> -> !tA
    %t6 = gpu.wait async
    %t7 = gpu.launch async [%t6] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %sa = memref.get_global @a_smem : memref<64x64xf16, 3>
      %sb = memref.get_global @b_smem : memref<64x64xf16, 3>
      %bar = nvgpu.mbarrier.create -> !bar
      %i0 = arith.constant 0 : index
      %one = arith.constant 1 : index
      %leader = arith.cmpi eq, %tx, %i0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%i0], %one : !bar
      }
      gpu.barrier
      scf.if %leader {
        %bytes = arith.constant 16384 : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%i0], %bytes : !bar
        nvgpu.tma.async.load %ma[%i0, %i0], %bar[%i0] to %sa : !tA, !bar -> memref<64x64xf16, 3>
        nvgpu.tma.async.load %mb[%i0, %i0], %bar[%i0] to %sb : !tA, !bar -> memref<64x64xf16, 3>
      }
      %phase = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%i0], %phase, %ticks : !bar
      %dA = nvgpu.warpgroup.generate.descriptor %sa, %ma : memref<64x64xf16, 3>, !tA -> !nvgpu.warpgroup.descriptor<tensor = memref<64x64xf16, 3>>
      %dB = nvgpu.warpgroup.generate.descriptor %sb, %mb : memref<64x64xf16, 3>, !tA -> !nvgpu.warpgroup.descriptor<tensor = memref<64x64xf16, 3>>
      %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %res = nvgpu.warpgroup.mma %dA, %dB, %init {transposeB} : !nvgpu.warpgroup.descriptor<tensor = memref<64x64xf16, 3>>, !nvgpu.warpgroup.descriptor<tensor = memref<64x64xf16, 3>>, !acc -> !acc
      // nvgpu.warpgroup.mma commits its wgmmas as one group and waits with wait_group 1, which
      // leaves that group in flight: retire it before reading the accumulator (PTX ISA
      // 9.7.15.7: the accumulator may not be accessed before wgmma.wait_group retires it).
      nvvm.wgmma.wait.group.sync.aligned 0
      nvgpu.warpgroup.mma.store %res, %dc : !acc to memref<64x64xf32>
      gpu.terminator
    }
    %t8 = gpu.memcpy async [%t7] %hc, %dc : memref<64x64xf32>, memref<64x64xf32>
    gpu.wait [%t8]
    %c5 = arith.constant 5 : index
    %c10 = arith.constant 10 : index
    %c31 = arith.constant 31 : index
    %c33 = arith.constant 33 : index
    %c62 = arith.constant 62 : index
    %c63 = arith.constant 63 : index
    %v0 = memref.load %hc[%c0, %c0] : memref<64x64xf32>
    %v1 = memref.load %hc[%c63, %c1] : memref<64x64xf32>
    %v2 = memref.load %hc[%c10, %c5] : memref<64x64xf32>
    %v3 = memref.load %hc[%c31, %c63] : memref<64x64xf32>
    %v4 = memref.load %hc[%c62, %c33] : memref<64x64xf32>
    %i0v = arith.fptosi %v0 : f32 to i32
    %i1v = arith.fptosi %v1 : f32 to i32
    %i2v = arith.fptosi %v2 : f32 to i32
    %i3v = arith.fptosi %v3 : f32 to i32
    %i4v = arith.fptosi %v4 : f32 to i32
    vector.print str "C "
    vector.print %i0v : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %i1v : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %i2v : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %i3v : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %i4v : i32
    %zero = arith.constant 0.0 : f32
    %s = scf.for %m = %c0 to %c64 step %c1 iter_args(%acc0 = %zero) -> (f32) {
      %inner = scf.for %n = %c0 to %c64 step %c1 iter_args(%acc1 = %acc0) -> (f32) {
        %v = memref.load %hc[%m, %n] : memref<64x64xf32>
        %a = arith.addf %acc1, %v : f32
        scf.yield %a : f32
      }
      scf.yield %inner : f32
    }
    %si = arith.fptosi %s : f32 to i32
    vector.print str "sum "
    vector.print %si : i32
    return
  }
}
