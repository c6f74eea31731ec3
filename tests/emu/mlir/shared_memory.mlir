// Workgroup attributions (shared memory) with gpu.barrier: each block of 64 threads reverses
// its slice through shared memory, then sums it with a tree reduction whose every step is
// fenced by a barrier. Two blocks, each with its own shared memory.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// Input x[i] = i (i = 0..127). Output rev[b*64 + t] = x[b*64 + 63 - t]; only the first and
// last four of each block are checked through the sums and a few elements.
// rev[0..3] = 63 62 61 60, rev[64..67] = 127 126 125 124
// CHECK: rev 63 62 61 60 127 126 125 124
// Block sums: 0+..+63 = 2016, 64+..+127 = 2016 + 64*64 = 6112
// CHECK: sums 2016 6112

module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %hx = memref.alloc() : memref<128xi32>
    scf.for %i = %c0 to %c128 step %c1 {
      %v = arith.index_cast %i : index to i32
      memref.store %v, %hx[%i] : memref<128xi32>
    }
    %hrev = memref.alloc() : memref<128xi32>
    %hsum = memref.alloc() : memref<2xi32>
    %t0 = gpu.wait async
    %dx, %t1 = gpu.alloc async [%t0] () : memref<128xi32>
    %drev, %t2 = gpu.alloc async [%t1] () : memref<128xi32>
    %dsum, %t3 = gpu.alloc async [%t2] () : memref<2xi32>
    %t4 = gpu.memcpy async [%t3] %dx, %hx : memref<128xi32>, memref<128xi32>
    %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
                       threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
                       workgroup(%buf : memref<64xi32, #gpu.address_space<workgroup>>, %acc : memref<64xi32, #gpu.address_space<workgroup>>) {
      %base = arith.muli %bx, %c64 : index
      %gi = arith.addi %base, %tx : index
      %v = memref.load %dx[%gi] : memref<128xi32>
      memref.store %v, %buf[%tx] : memref<64xi32, #gpu.address_space<workgroup>>
      memref.store %v, %acc[%tx] : memref<64xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c63 = arith.constant 63 : index
      %mirror = arith.subi %c63, %tx : index
      %r = memref.load %buf[%mirror] : memref<64xi32, #gpu.address_space<workgroup>>
      memref.store %r, %drev[%gi] : memref<128xi32>
      // Tree reduction: stride 32, 16, ..., 1.
      %c32 = arith.constant 32 : index
      %last = scf.for %step = %c0 to %c64 step %c1 iter_args(%stride = %c32) -> (index) {
        %active = arith.cmpi ult, %tx, %stride : index
        %live = arith.cmpi ugt, %stride, %c0 : index
        %both = arith.andi %active, %live : i1
        scf.if %both {
          %o = arith.addi %tx, %stride : index
          %a = memref.load %acc[%tx] : memref<64xi32, #gpu.address_space<workgroup>>
          %b = memref.load %acc[%o] : memref<64xi32, #gpu.address_space<workgroup>>
          %s = arith.addi %a, %b : i32
          memref.store %s, %acc[%tx] : memref<64xi32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
        %next = arith.divui %stride, %c2 : index
        scf.yield %next : index
      }
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        %total = memref.load %acc[%c0] : memref<64xi32, #gpu.address_space<workgroup>>
        memref.store %total, %dsum[%bx] : memref<2xi32>
      }
      gpu.terminator
    }
    %t6 = gpu.memcpy async [%t5] %hrev, %drev : memref<128xi32>, memref<128xi32>
    %t7 = gpu.memcpy async [%t6] %hsum, %dsum : memref<2xi32>, memref<2xi32>
    gpu.wait [%t7]
    %c3 = arith.constant 3 : index
    %c65 = arith.constant 65 : index
    %c66 = arith.constant 66 : index
    %c67 = arith.constant 67 : index
    %r0 = memref.load %hrev[%c0] : memref<128xi32>
    %r1 = memref.load %hrev[%c1] : memref<128xi32>
    %r2 = memref.load %hrev[%c2] : memref<128xi32>
    %r3 = memref.load %hrev[%c3] : memref<128xi32>
    %r64 = memref.load %hrev[%c64] : memref<128xi32>
    %r65 = memref.load %hrev[%c65] : memref<128xi32>
    %r66 = memref.load %hrev[%c66] : memref<128xi32>
    %r67 = memref.load %hrev[%c67] : memref<128xi32>
    %s0 = memref.load %hsum[%c0] : memref<2xi32>
    %s1 = memref.load %hsum[%c1] : memref<2xi32>
    vector.print str "rev "
    vector.print %r0 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r1 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r2 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r3 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r64 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r65 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r66 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %r67 : i32
    vector.print str "sums "
    vector.print %s0 : i32 punctuation <no_punctuation>
    vector.print str " "
    vector.print %s1 : i32
    return
  }
}
