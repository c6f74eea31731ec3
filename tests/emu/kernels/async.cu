// TMA, mbarrier and wgmma kernels for the virtual device's tests, written with the PTX the
// templates use (inline asm), each with switches that turn it into one of the faulty kernels
// a checker must catch.
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ std::uint32_t smem(const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect(std::uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, int parity) {
  asm volatile(
      "{\n"
      ".reg .pred P1;\n"
      "LAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE;\n"
      "bra LAB_WAIT;\n"
      "DONE:\n"
      "}" ::"r"(smem(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(smem(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem(bar)) : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, int c0, int c1, const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(map), "r"(c0), "r"(c1), "r"(smem(src)) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// A 64 x 64 bf16 tile (128-byte rows, 128B swizzle) loaded by TMA and stored back by TMA.
// touch: threads add 1 to every element through the generic proxy before the store;
// fence: whether they then execute fence.proxy.async (the store reads through the async proxy).
extern "C" __global__ void tma_roundtrip(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                                         int expect_bytes, int parity, int store_c0, int store_c1, int touch, int fence) {
  __shared__ __align__(1024) std::uint8_t tile[64 * 128];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) mbar_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_expect(&bar, expect_bytes);
    tma_load(tile, &in, 0, 0, &bar);
  }
  // parity 1: the off-by-one wait that passes at once (the phase before the first counts as
  // complete); parity 2: a second wait for a phase nobody completes.
  mbar_wait(&bar, parity & 1);
  if (parity >= 2) mbar_wait(&bar, 1);
  if (touch) {
    // Swizzling permutes 16-byte chunks within a row, so adding to every element is layout-free.
    unsigned short* h = reinterpret_cast<unsigned short*>(tile);
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
      float f = __uint_as_float(static_cast<unsigned>(h[i]) << 16) + 1.0f;
      h[i] = static_cast<unsigned short>(__float_as_uint(f) >> 16);
    }
  }
  if (fence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) tma_store(&out, store_c0, store_c1, tile);
}

__device__ __forceinline__ std::uint64_t desc(const void* p, int swizzle_code) {
  std::uint64_t a = smem(p);
  return ((a & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) | (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t(swizzle_code) << 62);
}

#define ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

// One wgmma.mma_async m64n64k16 (bf16 x bf16 -> f32) on 32 accumulators per thread; D is added
// to (scale-d) unless `accumulate` is false.
__device__ __forceinline__ void wgmma_m64n64k16(float* d, std::uint64_t da, std::uint64_t db, bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n"
      "}"
      : ACC8(0), ACC8(8), ACC8(16), ACC8(24)
      : "l"(da), "l"(db), "r"(accumulate ? 1 : 0));
}

// D (64 x 64, f32) = A (64 x 64 bf16, K-major) x B^T (B: 64 x 64 bf16, N rows of K, K-major),
// one warpgroup, four k-steps of wgmma.mma_async m64n64k16, operands through TMA with 128B
// swizzle. desc_swizzle: the layout code the descriptors carry (1 = 128B agrees with the maps).
// early_read: read an accumulator before wgmma.wait_group.
// Keeps the compiler from moving accesses to the accumulators across the asm statements around
// it (an empty asm that reads and writes each register; CUTLASS's warpgroup_fence_operand):
// without it nvcc sinks the zeroing movs below wgmma.fence, and the PTX ISA (9.7.15.6) requires
// the fence between any other access to those registers and the wgmma.mma_async.
__device__ __forceinline__ void fence_operands(float (&d)[32]) {
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

extern "C" __global__ void wgmma_tile(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                                      float* out, int desc_swizzle, int early_read) {
  __shared__ __align__(1024) std::uint8_t sa[64 * 128];
  __shared__ __align__(1024) std::uint8_t sb[64 * 128];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) mbar_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_expect(&bar, 2 * 64 * 128);
    tma_load(sa, &a_map, 0, 0, &bar);
    tma_load(sb, &b_map, 0, 0, &bar);
  }
  mbar_wait(&bar, 0);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  fence_operands(d);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int ks = 0; ks < 4; ++ks) {
    std::uint64_t da = desc(sa + 32 * ks, desc_swizzle), db = desc(sb + 32 * ks, desc_swizzle);
    wgmma_m64n64k16(d, da, db, ks > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  if (early_read) out[64 * 64 + threadIdx.x] = d[0];
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = 0; r < 32; ++r) {
    int row = 16 * warp + lane / 4 + 8 * ((r >> 1) & 1);
    int col = 8 * (r >> 2) + 2 * (lane % 4) + (r & 1);
    out[row * 64 + col] = d[r];
  }
}

__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
}

// A two-stage TMA -> wgmma pipeline with warp specialization: warpgroup 0 consumes (wgmma),
// one thread of warpgroup 1 produces (TMA). full[s] completes when stage s landed; empty[s]
// when every consumer warp is done reading it (4 arrivals). D = A x B^T over K = 64 k_steps,
// A and B 64 x K bf16, K-major. release_early: each consumer warp frees the stage before
// wgmma.wait_group retired the wgmma reading it -- the producer may overwrite it under the
// tensor core.
extern "C" __global__ void pipelined(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                                     float* out, int k_steps, int release_early) {
  __shared__ __align__(1024) std::uint8_t sa[2][64 * 128];
  __shared__ __align__(1024) std::uint8_t sb[2][64 * 128];
  __shared__ std::uint64_t full[2], empty[2];
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 4);
    }
  }
  __syncthreads();
  if (threadIdx.x >= 128) {
    if (threadIdx.x == 128) {
      for (int ks = 0; ks < k_steps; ++ks) {
        int s = ks % 2;
        if (ks >= 2) mbar_wait(&empty[s], ((ks / 2) - 1) & 1);
        mbar_expect(&full[s], 2 * 64 * 128);
        tma_load(sa[s], &a_map, 64 * ks, 0, &full[s]);
        tma_load(sb[s], &b_map, 64 * ks, 0, &full[s]);
      }
    }
    return;
  }
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  for (int ks = 0; ks < k_steps; ++ks) {
    int s = ks % 2;
    mbar_wait(&full[s], (ks / 2) & 1);
    fence_operands(d);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int kk = 0; kk < 4; ++kk) {
      std::uint64_t da = desc(sa[s] + 32 * kk, 1), db = desc(sb[s] + 32 * kk, 1);
      wgmma_m64n64k16(d, da, db, ks > 0 || kk > 0);
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    if (release_early && threadIdx.x % 32 == 0) mbar_arrive(&empty[s]);
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (!release_early && threadIdx.x % 32 == 0) mbar_arrive(&empty[s]);
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = 0; r < 32; ++r) {
    int row = 16 * warp + lane / 4 + 8 * ((r >> 1) & 1);
    int col = 8 * (r >> 2) + 2 * (lane % 4) + (r & 1);
    out[row * 64 + col] = d[r];
  }
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}

// TMA multicast (PTX ISA cp.async.bulk.tensor .multicast::cluster): CTA rank 0 loads one
// 64 x 64 bf16 box into the same shared offset of every CTA in `mask`, completing its bytes on
// each destination's mbarrier; every CTA then stores what it received to rows 64 * rank of out.
extern "C" __global__ void multicast(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                                     int mask) {
  __shared__ __align__(1024) std::uint8_t tile[64 * 128];
  __shared__ std::uint64_t bar;
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) mbar_init(&bar, 1);
  cluster_sync();  // every CTA's barrier is initialized before anyone signals it
  if (threadIdx.x == 0) {
    mbar_expect(&bar, 64 * 128);
    if (rank == 0)
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
          " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem(tile)), "l"(&in), "r"(0), "r"(0), "r"(smem(&bar)), "h"(static_cast<unsigned short>(mask))
          : "memory");
  }
  mbar_wait(&bar, 0);
  if (threadIdx.x == 0) tma_store(&out, 0, 64 * static_cast<int>(rank), tile);
  cluster_sync();
}

// Warp 1 waits for phase 0 of a count-1 barrier that thread 0 completes twice in a row: unless
// the waiter looked between the two completions, it never sees phase 0 (the parity it waits
// for comes back) and waits for a phase nobody completes.
extern "C" __global__ void missed_phase(int* out) {
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) mbar_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 32) {
    mbar_wait(&bar, 0);
    out[0] = 1;
  }
  if (threadIdx.x == 0) {
    mbar_arrive(&bar);
    mbar_arrive(&bar);
  }
}
