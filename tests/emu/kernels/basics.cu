// Kernels for the virtual device's tests, compiled to PTX by nvcc at build time (no GPU needed).
#include <cstdio>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == 0) printf("n=%d first=%.1f\n", n, a[0] + b[0]);
}

extern "C" __global__ void warp_sum(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

extern "C" __global__ void block_reverse(const int* in, int* out) {
  __shared__ int buf[256];
  buf[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void out_of_bounds(int* p, int n) { p[threadIdx.x + n] = 1; }

extern "C" __global__ void diverged_sync(int* p) {
  if (threadIdx.x < 16) __syncthreads();  // only half of the block reaches the barrier
  p[threadIdx.x] = 1;
}

// block_reverse without the barrier: a thread reads a slot another thread writes, unordered.
extern "C" __global__ void racy_reverse(const int* in, int* out) {
  __shared__ int buf[256];
  buf[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

// All 32 lanes shuffle with a membermask naming only the low 16: undefined per the ISA.
extern "C" __global__ void shfl_outside_mask(int* out) {
  out[threadIdx.x] = __shfl_sync(0x0000ffffu, static_cast<int>(threadIdx.x), 0);
}
