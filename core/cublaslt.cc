#include "core/cublaslt.h"

#include <cublasLt.h>  // types and enums only; the functions are bound at run time

#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/error.h"
#include "core/toolkit.h"

namespace mgpu::core {

struct CublasLt::Api {
#define MGPU_LT(fn) decltype(&::fn) fn = nullptr;
  MGPU_LT(cublasLtCreate)
  MGPU_LT(cublasLtDestroy)
  MGPU_LT(cublasLtMatmulDescCreate)
  MGPU_LT(cublasLtMatmulDescDestroy)
  MGPU_LT(cublasLtMatmulDescSetAttribute)
  MGPU_LT(cublasLtMatrixLayoutCreate)
  MGPU_LT(cublasLtMatrixLayoutDestroy)
  MGPU_LT(cublasLtMatmulPreferenceCreate)
  MGPU_LT(cublasLtMatmulPreferenceDestroy)
  MGPU_LT(cublasLtMatmulPreferenceSetAttribute)
  MGPU_LT(cublasLtMatmulAlgoGetHeuristic)
  MGPU_LT(cublasLtMatmul)
#undef MGPU_LT
};

namespace {
void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::Launch, fmt::format("{} failed with cuBLAS status {}", call, static_cast<int>(s)));
}
}  // namespace

CublasLt::CublasLt(DynamicLibrary lib) : lib_(std::move(lib)), api_(new Api) {
#define MGPU_BIND(fn) api_->fn = reinterpret_cast<decltype(api_->fn)>(lib_.require<void()>(#fn));
  MGPU_BIND(cublasLtCreate)
  MGPU_BIND(cublasLtDestroy)
  MGPU_BIND(cublasLtMatmulDescCreate)
  MGPU_BIND(cublasLtMatmulDescDestroy)
  MGPU_BIND(cublasLtMatmulDescSetAttribute)
  MGPU_BIND(cublasLtMatrixLayoutCreate)
  MGPU_BIND(cublasLtMatrixLayoutDestroy)
  MGPU_BIND(cublasLtMatmulPreferenceCreate)
  MGPU_BIND(cublasLtMatmulPreferenceDestroy)
  MGPU_BIND(cublasLtMatmulPreferenceSetAttribute)
  MGPU_BIND(cublasLtMatmulAlgoGetHeuristic)
  MGPU_BIND(cublasLtMatmul)
#undef MGPU_BIND
  cublasLtHandle_t h = nullptr;
  check(api_->cublasLtCreate(&h), "cublasLtCreate");
  handle_ = h;
}

CublasLt::~CublasLt() {
  if (handle_) api_->cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
  delete api_;
}

const CublasLt& CublasLt::get() {
  static std::once_flag once;
  static std::unique_ptr<CublasLt> lt;  // lives as long as the process
  static std::optional<Error> failure;
  std::call_once(once, [] {
    try {
      CudaContext::primary();  // cuBLASLt works in the current context
      lt.reset(new CublasLt(load_runtime_library(RuntimeLibrary::CublasLt)));
    } catch (const Error& e) {
      failure.emplace(ErrorKind::Unavailable, fmt::format("cuBLASLt reference unavailable: {}", e.what()));
    }
  });
  if (failure) throw *failure;
  return *lt;
}

void CublasLt::matmul_reference(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, std::int64_t m, std::int64_t n,
                                std::int64_t k, bool b_nk, bool bf16) const {
  matmul(a, b, c, m, n, k, b_nk, bf16, 4, 0, 0);
  CudaContext::primary().synchronize();
}

void CublasLt::matmul(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, std::int64_t m, std::int64_t n, std::int64_t k,
                      bool b_nk, bool bf16, int out_bytes, CUdeviceptr workspace, std::size_t workspace_bytes) const {
  // Row-major C = A . B is column-major C^T (N x M) = op(B^T) . A^T: the "A" of cuBLAS is our
  // B (N x K col-major when B is K x N row-major, transposed when B is N x K), its "B" our A
  // (K x M col-major = A row-major).
  const Api& x = *api_;
  cudaDataType_t in = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  cudaDataType_t out = out_bytes == 4 ? CUDA_R_32F : in;
  cublasLtMatmulDesc_t desc = nullptr;
  check(x.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  cublasOperation_t ta = b_nk ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  x.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  x.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  if (b_nk) check(x.cublasLtMatrixLayoutCreate(&la, in, k, n, k), "cublasLtMatrixLayoutCreate(B)");
  else check(x.cublasLtMatrixLayoutCreate(&la, in, n, k, n), "cublasLtMatrixLayoutCreate(B)");
  check(x.cublasLtMatrixLayoutCreate(&lb, in, k, m, k), "cublasLtMatrixLayoutCreate(A)");
  check(x.cublasLtMatrixLayoutCreate(&lc, out, n, m, n), "cublasLtMatrixLayoutCreate(C)");
  cublasLtMatmulPreference_t pref = nullptr;
  check(x.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  x.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                         sizeof workspace_bytes);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check(x.cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), desc, la, lb, lc, lc, pref, 1,
                                         &heuristic, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) throw Error(ErrorKind::Launch, "cuBLASLt has no algorithm for this GEMM");
  float alpha = 1.0f, beta = 0.0f;
  check(x.cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), desc, &alpha, reinterpret_cast<void*>(b), la,
                         reinterpret_cast<void*>(a), lb, &beta, reinterpret_cast<void*>(c), lc,
                         reinterpret_cast<void*>(c), lc, &heuristic.algo, reinterpret_cast<void*>(workspace),
                         workspace_bytes, nullptr),
        "cublasLtMatmul");
  x.cublasLtMatmulPreferenceDestroy(pref);
  x.cublasLtMatrixLayoutDestroy(la);
  x.cublasLtMatrixLayoutDestroy(lb);
  x.cublasLtMatrixLayoutDestroy(lc);
  x.cublasLtMatmulDescDestroy(desc);
}

}  // namespace mgpu::core
