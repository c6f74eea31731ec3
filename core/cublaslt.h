// The reference GEMM that verification compares against: cuBLASLt (opened at run time), on
// the same device buffers, with f32 accumulation and an f32 output so the reference itself
// adds no rounding. Contract: get() throws Error{Unavailable} when libcublasLt cannot be
// loaded; matmul_reference() computes C = A . B for row-major A (M x K), B (K x N, or N x K
// when b_nk), C (M x N, f32) with bf16 or f16 inputs, synchronously; failures throw
// Error{Launch} naming the call and its status.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "core/dynlib.h"

namespace mgpu::core {

class CublasLt {
 public:
  static const CublasLt& get();
  void matmul_reference(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c_f32, std::int64_t m, std::int64_t n,
                        std::int64_t k, bool b_nk, bool bf16) const;
  // The same product with a 16-bit (or f32) output as production code would call it, choosing
  // cuBLASLt's best heuristic algorithm with `workspace` bytes; asynchronous on the default
  // stream (time it with events). For "% of cuBLAS" comparisons.
  void matmul(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, std::int64_t m, std::int64_t n, std::int64_t k, bool b_nk,
              bool bf16, int out_bytes, CUdeviceptr workspace, std::size_t workspace_bytes) const;
  ~CublasLt();

 private:
  explicit CublasLt(DynamicLibrary lib);
  struct Api;
  DynamicLibrary lib_;
  Api* api_;
  void* handle_ = nullptr;
};

}  // namespace mgpu::core
