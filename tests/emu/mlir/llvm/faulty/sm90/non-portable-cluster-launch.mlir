// From LLVM: mlir/test/Integration/GPU/CUDA/sm90/non-portable-cluster-launch.mlir
// as of llvm/llvm-project commit 314de0d83bbb963912214163c63de24991494663.
// Part of the LLVM Project, under the Apache License v2.0 with LLVM Exceptions
// (SPDX: Apache-2.0 WITH LLVM-exception; see LICENSE in tests/emu/mlir/llvm).
// Changed: the RUN lines (mlir-runner with libmgpu_mlir_runtime; upstream's options with cubin-format=isa)
// and, for MLIR 22's gpu.printf, a comma after each format string.
//
// EXPECT-FINDINGS below: the program launches 16-CTA clusters, above sm_90's portable 8, and nothing
// opts the kernel in. cuda.h, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: "Whether the
// function can be launched with non-portable cluster size. 1 is allowed, 0 is disallowed" -- 0 until a
// caller sets it with cuFuncSetAttribute, which mgpuLaunchClusterKernel (upstream's runtime wrappers as
// ours) never does; the launch_func's `nonPortableClusterSize = true` is a discardable attribute no
// MLIR 22 lowering reads. So the driver refuses the first launch (Triton, CUTLASS and nvFuser set the
// attribute before any launch above 8). Until 2026-11-28 the virtual driver took any cluster size
// and this program passed (battery round 18, F20).
// EXPECT-FINDINGS
// FINDING: CUDA_ERROR_INVALID_CLUSTER_SIZE
// FINDING: a cluster of 16 CTAs is more than the portable 8 and the function does not allow a non-portable size
// RUN: mlir-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 opt-level=3 cubin-format=isa" \
// RUN: | not mlir-runner --shared-libs=%mgpu_mlir_runtime,%mlir_runner_utils,%mlir_c_runner_utils --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --check-prefix=FINDING
// MGPU-PIPELINE: -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 opt-level=3 cubin-format=isa"

// CHECK: clusterIdx: (3, 3, 0) in Cluster Dimension: (4, 4, 1) blockIdx: (15, 15, 0)
// CHECK: clusterIdx: (3, 3, 0) in Cluster Dimension: (4, 4, 1) blockIdx: (15, 15, 0)

module attributes {gpu.container_module} {
gpu.module @gpumodule {
  gpu.func @kernel_cluster() kernel attributes {gpu.known_block_size = array<i32: 1, 1, 1>, gpu.known_grid_size = array<i32: 2, 2, 1>} {
    %cidX = gpu.cluster_id  x
    %cidY = gpu.cluster_id  y
    %cidZ = gpu.cluster_id  z
    %cdimX = gpu.cluster_dim_blocks  x
    %cdimY = gpu.cluster_dim_blocks  y
    %cdimZ = gpu.cluster_dim_blocks  z
    %bidX = gpu.block_id  x
    %bidY = gpu.block_id  y
    %bidZ = gpu.block_id  z
    %cidX_i32 = index.casts %cidX : index to i32
    %cidY_i32 = index.casts %cidY : index to i32
    %cidZ_i32 = index.casts %cidZ : index to i32
    %cdimX_i32 = index.casts %cdimX : index to i32
    %cdimY_i32 = index.casts %cdimY : index to i32
    %cdimZ_i32 = index.casts %cdimZ : index to i32
    %bidX_i32 = index.casts %bidX : index to i32
    %bidY_i32 = index.casts %bidY : index to i32
    %bidZ_i32 = index.casts %bidZ : index to i32

    %c_1 = arith.constant -1 : index
    %cBlocksX = gpu.grid_dim x
    %cN_1 = arith.addi %cBlocksX, %c_1 : index
    %cnd1 =  arith.cmpi eq, %bidX, %cN_1 : index
    %cnd2 =  arith.cmpi eq, %bidY, %cN_1 : index
    scf.if %cnd1 {
      scf.if %cnd2 {
        gpu.printf "clusterIdx: (%d, %d, %d) in Cluster Dimension: (%d, %d, %d) blockIdx: (%d, %d, %d) \n",
          %cidX_i32,
          %cidY_i32,
          %cidZ_i32,
          %cdimX_i32,
          %cdimY_i32,
          %cdimZ_i32,
          %bidX_i32,
          %bidY_i32,
          %bidZ_i32
          :
          i32, i32, i32, i32, i32, i32, i32, i32, i32
      }
    }
    gpu.return
  }
}

func.func @main() {
  %cDimX = arith.constant 4 : index
  %cDimY = arith.constant 4 : index
  %cDimZ = arith.constant 1 : index
  %gDimX = arith.constant 16 : index
  %gDimY = arith.constant 16 : index
  %gDimZ = arith.constant 1 : index
  %bDimX = arith.constant 1 : index
  %bDimY = arith.constant 1 : index
  %bDimZ = arith.constant 1 : index

  gpu.launch clusters(%cx, %cy, %cz) in (%cluster_x = %cDimX, %cluster_y = %cDimY,
                                       %cluster_z = %cDimZ)
             blocks(%bx, %by, %bz) in (%grid_x = %gDimX, %grid_y = %gDimY,
                                       %grid_z = %gDimZ)
             threads(%tx, %ty, %tz) in (%block_x = %bDimX, %block_y = %bDimY,
                                        %block_z = %bDimZ) {
      %cidX = gpu.cluster_id  x
      %cidY = gpu.cluster_id  y
      %cidZ = gpu.cluster_id  z
      %cdimX = gpu.cluster_dim_blocks  x
      %cdimY = gpu.cluster_dim_blocks  y
      %cdimZ = gpu.cluster_dim_blocks  z
      %bidX = gpu.block_id  x
      %bidY = gpu.block_id  y
      %bidZ = gpu.block_id  z
      %cidX_i32 = index.casts %cidX : index to i32
      %cidY_i32 = index.casts %cidY : index to i32
      %cidZ_i32 = index.casts %cidZ : index to i32
      %cdimX_i32 = index.casts %cdimX : index to i32
      %cdimY_i32 = index.casts %cdimY : index to i32
      %cdimZ_i32 = index.casts %cdimZ : index to i32
      %bidX_i32 = index.casts %bidX : index to i32
      %bidY_i32 = index.casts %bidY : index to i32
      %bidZ_i32 = index.casts %bidZ : index to i32

      %c_1 = arith.constant -1 : index
      %cBlocksX = gpu.grid_dim x
      %cN_1 = arith.addi %cBlocksX, %c_1 : index
      %cnd1 =  arith.cmpi eq, %bidX, %cN_1 : index
      %cnd2 =  arith.cmpi eq, %bidY, %cN_1 : index
      scf.if %cnd1 {
        scf.if %cnd2 {
          gpu.printf "clusterIdx: (%d, %d, %d) in Cluster Dimension: (%d, %d, %d) blockIdx: (%d, %d, %d) \n",
            %cidX_i32,
            %cidY_i32,
            %cidZ_i32,
            %cdimX_i32,
            %cdimY_i32,
            %cdimZ_i32,
            %bidX_i32,
            %bidY_i32,
            %bidZ_i32
            :
            i32, i32, i32, i32, i32, i32, i32, i32, i32
        }
      }

      gpu.terminator
  } { nonPortableClusterSize = true}

  gpu.launch_func  @gpumodule::@kernel_cluster clusters in (%cDimX,%cDimY,%cDimZ)  blocks in (%gDimX, %gDimY, %gDimZ) threads in (%bDimX, %bDimY, %bDimZ) { nonPortableClusterSize = true }
  return
}
}
