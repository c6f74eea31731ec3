// A small grid-stride saxpy kernel: the smoke test of the MLIR -> PTX -> cubin path.
module attributes {gpu.container_module} {
  gpu.module @smoke {
    gpu.func @saxpy(%x: memref<1024xf32>, %y: memref<1024xf32>, %a: f32, %n: index) kernel {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %gdim = gpu.grid_dim x
      %base = arith.muli %bid, %bdim : index
      %first = arith.addi %base, %tid : index
      %stride = arith.muli %gdim, %bdim : index
      scf.for %i = %first to %n step %stride {
        %xi = memref.load %x[%i] : memref<1024xf32>
        %yi = memref.load %y[%i] : memref<1024xf32>
        %ax = arith.mulf %xi, %a : f32
        %r = arith.addf %ax, %yi : f32
        memref.store %r, %y[%i] : memref<1024xf32>
      }
      gpu.return
    }
  }
}
