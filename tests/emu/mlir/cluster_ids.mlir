// gpu.launch with clusters: a 4x2 grid of clusters of 2x2 blocks (8x4 blocks). Every block
// records its cluster id, its block id within the cluster and the cluster shape; the host
// checks them against the block id.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// Row by = 0..3, column bx = 0..7: 1000 * cluster.x + 100 * cluster.y + 10 * cblock.x + cblock.y
// with cluster = (bx / 2, by / 2) and cblock = (bx mod 2, by mod 2).
// CHECK:      [0,   10,   1000,   1010,   2000,   2010,   3000,   3010],
// CHECK-NEXT: [1,   11,   1001,   1011,   2001,   2011,   3001,   3011],
// CHECK-NEXT: [100,   110,   1100,   1110,   2100,   2110,   3100,   3110],
// CHECK-NEXT: [101,   111,   1101,   1111,   2101,   2111,   3101,   3111]]
// Cluster shape seen by every block: 2 x 2 x 1 -> 221; grid of clusters 4 x 2 x 1 -> 421
// CHECK: shape 221 clusters 421 mismatches 0

module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %h = memref.alloc() : memref<4x8xi32>
    %hs = memref.alloc() : memref<3xi32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<4x8xi32>
    %ds, %t2 = gpu.alloc async [%t1] () : memref<3xi32>
    %zero = arith.constant 0 : i32
    %t3 = gpu.memset async [%t2] %ds, %zero : memref<3xi32>, i32
    %t4 = gpu.launch async [%t3] clusters(%cx, %cy, %cz) in (%ncx = %c2, %ncy = %c2, %ncz = %c1)
                       blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c4, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %cidx = gpu.cluster_id x
      %cidy = gpu.cluster_id y
      %cbx = gpu.cluster_block_id x
      %cby = gpu.cluster_block_id y
      %cdx = gpu.cluster_dim_blocks x
      %cdy = gpu.cluster_dim_blocks y
      %cdz = gpu.cluster_dim_blocks z
      %ncx2 = gpu.cluster_dim x
      %ncy2 = gpu.cluster_dim y
      %ncz2 = gpu.cluster_dim z
      %k1000 = arith.constant 1000 : index
      %k100 = arith.constant 100 : index
      %k10 = arith.constant 10 : index
      %a = arith.muli %cidx, %k1000 : index
      %b = arith.muli %cidy, %k100 : index
      %c = arith.muli %cbx, %k10 : index
      %ab = arith.addi %a, %b : index
      %abc = arith.addi %ab, %c : index
      %v = arith.addi %abc, %cby : index
      %vi = arith.index_cast %v : index to i32
      memref.store %vi, %d[%by, %bx] : memref<4x8xi32>
      %s1 = arith.muli %cdx, %k100 : index
      %s2 = arith.muli %cdy, %k10 : index
      %s12 = arith.addi %s1, %s2 : index
      %shape = arith.addi %s12, %cdz : index
      %g1 = arith.muli %ncx2, %k100 : index
      %g2 = arith.muli %ncy2, %k10 : index
      %g12 = arith.addi %g1, %g2 : index
      %grid = arith.addi %g12, %ncz2 : index
      %shapei = arith.index_cast %shape : index to i32
      %gridi = arith.index_cast %grid : index to i32
      %i0 = arith.constant 0 : index
      %i1 = arith.constant 1 : index
      %i2 = arith.constant 2 : index
      %is00 = arith.cmpi eq, %bx, %i0 : index
      %is00y = arith.cmpi eq, %by, %i0 : index
      %origin = arith.andi %is00, %is00y : i1
      scf.if %origin {
        memref.store %shapei, %ds[%i0] : memref<3xi32>
        memref.store %gridi, %ds[%i1] : memref<3xi32>
      }
      // Every block checks that blockIdx = cluster id * cluster shape + block in cluster.
      %ex = arith.muli %cidx, %cdx : index
      %exb = arith.addi %ex, %cbx : index
      %ey = arith.muli %cidy, %cdy : index
      %eyb = arith.addi %ey, %cby : index
      %okx = arith.cmpi eq, %exb, %bx : index
      %oky = arith.cmpi eq, %eyb, %by : index
      %ok = arith.andi %okx, %oky : i1
      %k221 = arith.constant 221 : i32
      %okshape = arith.cmpi eq, %shapei, %k221 : i32
      %all = arith.andi %ok, %okshape : i1
      %true = arith.constant true
      %bad = arith.xori %all, %true : i1
      scf.if %bad {
        %one = arith.constant 1 : i32
        %r = memref.atomic_rmw addi %one, %ds[%i2] : (i32, memref<3xi32>) -> i32
      }
      gpu.terminator
    }
    %t5 = gpu.memcpy async [%t4] %h, %d : memref<4x8xi32>, memref<4x8xi32>
    %t6 = gpu.memcpy async [%t5] %hs, %ds : memref<3xi32>, memref<3xi32>
    gpu.wait [%t6]
    %u = memref.cast %h : memref<4x8xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    %s0 = memref.load %hs[%c0] : memref<3xi32>
    %s1 = memref.load %hs[%c1] : memref<3xi32>
    %s2 = memref.load %hs[%c2] : memref<3xi32>
    vector.print str "shape "
    vector.print %s0 : i32 punctuation <no_punctuation>
    vector.print str " clusters "
    vector.print %s1 : i32 punctuation <no_punctuation>
    vector.print str " mismatches "
    vector.print %s2 : i32
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
