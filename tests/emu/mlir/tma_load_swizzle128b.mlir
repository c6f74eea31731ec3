// TMA with the 128-byte swizzle: an 8x32 f32 box (128-byte rows) loaded into 1024-byte
// aligned shared memory; the block copies shared memory out as it lies, so the host sees the
// swizzled placement: the 16-byte chunk j of row r lands at chunk j ^ (r mod 8)
// (PTX ISA, "Tensor Access Modes" / swizzling modes; CUDA's CU_TENSOR_MAP_SWIZZLE_128B).
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// Global g is 16x32 with g[R][C] = 100 R + C; the box starts at row 8. A chunk is 4 floats.
// Row 0 (global row 8): unchanged.
// CHECK:      [800,   801,   802,   803,   804,   805,   806,   807,   808,   809,   810,   811,   812,   813,   814,   815,   816,   817,   818,   819,   820,   821,   822,   823,   824,   825,   826,   827,   828,   829,   830,   831],
// Row 1 (global row 9): chunk p holds chunk p ^ 1: 1 0 3 2 5 4 7 6.
// CHECK-NEXT: [904,   905,   906,   907,   900,   901,   902,   903,   912,   913,   914,   915,   908,   909,   910,   911,   920,   921,   922,   923,   916,   917,   918,   919,   928,   929,   930,   931,   924,   925,   926,   927],
// Rows 2..4 skipped; row 5 (global row 13): chunk p holds chunk p ^ 5: 5 4 7 6 1 0 3 2.
// CHECK: [1320,   1321,   1322,   1323,   1316,   1317,   1318,   1319,   1328,   1329,   1330,   1331,   1324,   1325,   1326,   1327,   1304,   1305,   1306,   1307,   1300,   1301,   1302,   1303,   1312,   1313,   1314,   1315,   1308,   1309,   1310,   1311],
// Row 7 (global row 15): chunk p holds chunk p ^ 7: 7 6 5 4 3 2 1 0.
// CHECK: [1528,   1529,   1530,   1531,   1524,   1525,   1526,   1527,   1520,   1521,   1522,   1523,   1516,   1517,   1518,   1519,   1512,   1513,   1514,   1515,   1508,   1509,   1510,   1511,   1504,   1505,   1506,   1507,   1500,   1501,   1502,   1503]]

module attributes {gpu.container_module} {
  memref.global "private" @tile : memref<8x32xf32, 3> {alignment = 1024}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %hg = memref.alloc() : memref<16x32xf32>
    scf.for %r = %c0 to %c16 step %c1 {
      scf.for %c = %c0 to %c32 step %c1 {
        %k100 = arith.constant 100 : index
        %r100 = arith.muli %r, %k100 : index
        %v = arith.addi %r100, %c : index
        %vi = arith.index_cast %v : index to i32
        %vf = arith.sitofp %vi : i32 to f32
        memref.store %vf, %hg[%r, %c] : memref<16x32xf32>
      }
    }
    %hout = memref.alloc() : memref<8x32xf32>
    %t0 = gpu.wait async
    %dg, %t1 = gpu.alloc async [%t0] () : memref<16x32xf32>
    %do, %t2 = gpu.alloc async [%t1] () : memref<8x32xf32>
    %t3 = gpu.memcpy async [%t2] %dg, %hg : memref<16x32xf32>, memref<16x32xf32>
    gpu.wait [%t3]
    %ug = memref.cast %dg : memref<16x32xf32> to memref<*xf32>
    %map = nvgpu.tma.create.descriptor %ug box[%c8, %c32] : memref<*xf32> -> !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
    %t4 = gpu.wait async
    %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %s = memref.get_global @tile : memref<8x32xf32, 3>
      %bar = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      %i0 = arith.constant 0 : index
      %one = arith.constant 1 : index
      %k8 = arith.constant 8 : index
      %leader = arith.cmpi eq, %tx, %i0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%i0], %one : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      }
      gpu.barrier
      scf.if %leader {
        %bytes = arith.constant 1024 : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%i0], %bytes : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
        nvgpu.tma.async.load %map[%i0, %k8], %bar[%i0] to %s : !nvgpu.tensormap.descriptor<tensor = memref<8x32xf32, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> memref<8x32xf32, 3>
      }
      %phase = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%i0], %phase, %ticks : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      scf.for %r = %i0 to %k8 step %one {
        %v = memref.load %s[%r, %tx] : memref<8x32xf32, 3>
        memref.store %v, %do[%r, %tx] : memref<8x32xf32>
      }
      gpu.terminator
    }
    %t6 = gpu.memcpy async [%t5] %hout, %do : memref<8x32xf32>, memref<8x32xf32>
    gpu.wait [%t6]
    %u = memref.cast %hout : memref<8x32xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
