// Several kernels on two streams joined through events (gpu.wait async on two tokens), with
// host-to-device, device-to-device and device-to-host copies and a memset on the way.
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa" \
// RUN: | mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s

// stream A: a = host [0..7]; a = a * 3            -> 0 3 6 9 12 15 18 21
// stream B: b = memset 5; b = b + tid             -> 5 6 7 8 9 10 11 12
// joined:   c = copy of a (device to device); c = c - b -> -5 -3 -1 1 3 5 7 9
// CHECK: [0,  3,  6,  9,  12,  15,  18,  21]
// CHECK: [5,  6,  7,  8,  9,  10,  11,  12]
// CHECK: [-5,  -3,  -1,  1,  3,  5,  7,  9]

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a : memref<8xi32>, %k : i32) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<8xi32>
      %r = arith.muli %v, %k : i32
      memref.store %r, %a[%t] : memref<8xi32>
      gpu.return
    }
    gpu.func @add_tid(%b : memref<8xi32>) kernel {
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %v = memref.load %b[%t] : memref<8xi32>
      %r = arith.addi %v, %ti : i32
      memref.store %r, %b[%t] : memref<8xi32>
      gpu.return
    }
    gpu.func @sub(%c : memref<8xi32>, %b : memref<8xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %c[%t] : memref<8xi32>
      %y = memref.load %b[%t] : memref<8xi32>
      %r = arith.subi %x, %y : i32
      memref.store %r, %c[%t] : memref<8xi32>
      gpu.return
    }
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %k3 = arith.constant 3 : i32
    %k5 = arith.constant 5 : i32
    %ha = memref.alloc() : memref<8xi32>
    %hb = memref.alloc() : memref<8xi32>
    %hc = memref.alloc() : memref<8xi32>
    scf.for %i = %c0 to %c8 step %c1 {
      %v = arith.index_cast %i : index to i32
      memref.store %v, %ha[%i] : memref<8xi32>
    }
    // Stream A.
    %sa = gpu.wait async
    %da, %a1 = gpu.alloc async [%sa] () : memref<8xi32>
    %a2 = gpu.memcpy async [%a1] %da, %ha : memref<8xi32>, memref<8xi32>
    %a3 = gpu.launch_func async [%a2] @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%da : memref<8xi32>, %k3 : i32)
    // Stream B.
    %sb = gpu.wait async
    %db, %b1 = gpu.alloc async [%sb] () : memref<8xi32>
    %b2 = gpu.memset async [%b1] %db, %k5 : memref<8xi32>, i32
    %b3 = gpu.launch_func async [%b2] @kernels::@add_tid blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%db : memref<8xi32>)
    // Joined on a third stream.
    %j = gpu.wait async [%a3, %b3]
    %dc, %j1 = gpu.alloc async [%j] () : memref<8xi32>
    %j2 = gpu.memcpy async [%j1] %dc, %da : memref<8xi32>, memref<8xi32>
    %j3 = gpu.launch_func async [%j2] @kernels::@sub blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%dc : memref<8xi32>, %db : memref<8xi32>)
    %j4 = gpu.memcpy async [%j3] %ha, %da : memref<8xi32>, memref<8xi32>
    %j5 = gpu.memcpy async [%j4] %hb, %db : memref<8xi32>, memref<8xi32>
    %j6 = gpu.memcpy async [%j5] %hc, %dc : memref<8xi32>, memref<8xi32>
    %j7 = gpu.dealloc async [%j6] %da : memref<8xi32>
    %j8 = gpu.dealloc async [%j7] %db : memref<8xi32>
    %j9 = gpu.dealloc async [%j8] %dc : memref<8xi32>
    gpu.wait [%j9]
    %ua = memref.cast %ha : memref<8xi32> to memref<*xi32>
    %ub = memref.cast %hb : memref<8xi32> to memref<*xi32>
    %uc = memref.cast %hc : memref<8xi32> to memref<*xi32>
    call @printMemrefI32(%ua) : (memref<*xi32>) -> ()
    call @printMemrefI32(%ub) : (memref<*xi32>) -> ()
    call @printMemrefI32(%uc) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
