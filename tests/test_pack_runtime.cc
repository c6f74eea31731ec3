// A kernel pack's C runtime (core/pack_runtime, kernels/matmul_pack/pack_matmul.c) over tables
// filled here as the export will fill them, with kernels compiled by the Hopper template, run on
// the virtual device through the runtime's own driver loading (MGPU_CUDA_DRIVER): the exact tuned
// problem and a ragged nearest one compute C = A . B within bf16's rounding of a float64
// reference; a split-K kernel runs from a workspace left full of garbage (the runtime zeroes its
// arrival counters: without that the reduction reads stale counts); every refusal the ABI
// promises comes back with its status and words, and nothing is launched for it.
#include <gtest/gtest.h>

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/compiler.h"
#include "core/cuda_context.h"
#include "core/half.h"
#include "kernels/matmul_sm90/config.h"
#include "kernels/matmul_sm90/template.h"

#include "mgpu_pack.h"
#include "pack_internal.h"
#include "pack_matmul.h"

namespace {

using mgpu::kernels::MatmulProblem;

// The tables the generated tables.c would hold, filled at run time.
std::vector<std::string> g_ptx;
std::vector<mgpu_pk_kernel> g_kernels;
std::vector<mgpu_pack_entry_info> g_infos;
std::vector<mgpu_pk_matmul_entry> g_entries;
mgpu_pk_common_tables g_common;
mgpu_pk_matmul_table g_matmul;
bool g_only_other_arch = false;  // the table as a pack of sm_100a kernels only would be
mgpu_pk_matmul_entry g_other_arch_entry;
mgpu_pk_kernel g_other_arch_kernel;

}  // namespace

extern "C" const mgpu_pk_common_tables* mgpu_pk_common(void) {
  if (g_only_other_arch) {
    static mgpu_pk_common_tables other;
    other = g_common;
    other.kernels = &g_other_arch_kernel;
    other.kernel_count = 1;
    return &other;
  }
  return &g_common;
}
extern "C" const mgpu_pk_matmul_table* mgpu_pk_matmul(void) {
  static mgpu_pk_matmul_table other;
  if (g_only_other_arch) {
    other = {&g_other_arch_entry, 1};
    return &other;
  }
  return &g_matmul;
}

namespace {

// Which of the problem's sizes (0 M, 1 N, 2 K) a tensor map extent is: the problems here have
// three distinct sizes, so the role is unambiguous.
int size_role(std::uint64_t extent, const MatmulProblem& p) {
  if (extent == std::uint64_t(p.m)) return 0;
  if (extent == std::uint64_t(p.n)) return 1;
  EXPECT_EQ(extent, std::uint64_t(p.k));
  return 2;
}

// Compiles config `c` at `p` and adds its kernel and one entry for it.
int add_entry(const mgpu::core::TuningConfig& c, const MatmulProblem& p, bool is_default) {
  const mgpu::kernels::MatmulTemplate& t = mgpu::kernels::sm90::hopper_matmul();
  const mgpu::core::BuiltKernel built = t.build(p, c);
  mgpu::core::CompileOptions options;
  options.cache_dir = std::string(::testing::TempDir()) + "/pack-runtime-cache";
  const mgpu::core::CompileResult compiled = mgpu::core::compile_module(built.mlir, t.arch(), options);
  g_ptx.push_back(compiled.units.at(0).ptx);
  mgpu_pk_kernel k{};
  k.name = "matmul";
  k.arch = "sm_90a";
  k.cc_major = 9;
  k.block_threads = built.block_threads;
  k.cluster_size = built.cluster_size;
  k.dynamic_smem_bytes = built.dynamic_smem_bytes;
  k.takes_workspace = built.takes_workspace;
  k.map_count = int(built.tensor_maps.size());
  for (int i = 0; i < k.map_count; ++i) {
    const mgpu::core::TensorMap2D& m = built.tensor_maps[std::size_t(i)];
    k.maps[i] = {m.element == mgpu::core::TmaElement::BF16  ? MGPU_BF16
                 : m.element == mgpu::core::TmaElement::F16 ? MGPU_F16
                                                            : MGPU_F32,
                 size_role(m.rows, p), size_role(m.cols, p), m.box_rows, m.box_cols, int(m.swizzle)};
  }
  g_kernels.push_back(k);
  g_infos.push_back({"matmul", "matmul_sm90", "sm_90a", "", "", "virtual", is_default ? "default" : "model", "test", "",
                     "", 0.0});
  mgpu_pk_matmul_entry e{};
  e.info = int(g_infos.size()) - 1;
  e.kernel = int(g_kernels.size()) - 1;
  e.consts = t.launch_consts(c);
  e.m = p.m;
  e.n = p.n;
  e.k = p.k;
  e.in = MGPU_BF16;
  e.out = MGPU_BF16;
  e.layout = MGPU_B_KN;
  e.is_default = is_default;
  g_entries.push_back(e);
  return e.info;
}

void publish() {
  for (std::size_t i = 0; i < g_kernels.size(); ++i) {
    g_kernels[i].ptx = reinterpret_cast<const unsigned char*>(g_ptx[i].c_str());  // NUL-terminated, as loaded
    g_kernels[i].ptx_size = g_ptx[i].size() + 1;
  }
  g_common = {g_kernels.data(), int(g_kernels.size()), g_infos.data(), int(g_infos.size())};
  g_matmul = {g_entries.data(), int(g_entries.size())};
}

struct Operands {
  std::vector<std::uint16_t> a, b;
  std::vector<double> reference;
  mgpu::core::DeviceBuffer da, db, dc;
  Operands(std::int64_t m, std::int64_t n, std::int64_t k)
      : da(std::size_t(m * k * 2)), db(std::size_t(k * n * 2)), dc(std::size_t(m * n * 2)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (std::int64_t i = 0; i < m * k; ++i) a.push_back(mgpu::core::to_bf16(u(rng)));
    for (std::int64_t i = 0; i < k * n; ++i) b.push_back(mgpu::core::to_bf16(u(rng)));
    da.upload(std::as_bytes(std::span(a)));
    db.upload(std::as_bytes(std::span(b)));
    dc.fill_bytes(0xFF);  // poisoned: an element left unwritten is NaN
    reference.assign(std::size_t(m * n), 0.0);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const double x = mgpu::core::from_bf16(a[std::size_t(i * k + kk)]);
        for (std::int64_t j = 0; j < n; ++j) reference[std::size_t(i * n + j)] += x * mgpu::core::from_bf16(b[std::size_t(kk * n + j)]);
      }
  }
  // The worst element's error over bf16's rounding of its reference (f32 accumulation is far finer).
  double worst(std::int64_t m, std::int64_t n) const {
    std::vector<std::uint16_t> c(std::size_t(m * n));
    dc.download(std::as_writable_bytes(std::span(c)));
    double worst = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const double got = mgpu::core::from_bf16(c[i]), want = reference[i];
      const double e = std::fabs(got - want) / (std::fabs(want) * 0x1p-8 + 1e-3);
      worst = std::isnan(got) ? INFINITY : std::max(worst, e);
    }
    return worst;
  }
  const void* A() const { return reinterpret_cast<const void*>(da.ptr()); }
  const void* B() const { return reinterpret_cast<const void*>(db.ptr()); }
  void* C() const { return reinterpret_cast<void*>(dc.ptr()); }
};

class PackRuntime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("MGPU_CUDA_DRIVER", MGPU_VCUDA_LIB, 1);
    mgpu::core::CudaContext::primary();  // the caller's context, current on this thread
    mgpu::kernels::sm90::MatmulConfig split;
    split.tile_m = 64;
    split.schedule = mgpu::kernels::sm90::Schedule::SplitK;
    split.split_k = 2;
    tuned_ = add_entry(mgpu::kernels::sm90::MatmulConfig{}.to_tuning_config(), {.m = 200, .n = 136, .k = 128}, false);
    split_ = add_entry(split.to_tuning_config(), {.m = 64, .n = 136, .k = 256}, false);
    publish();
  }
  static std::size_t workspace_of(std::int64_t m, std::int64_t n, std::int64_t k) {
    std::size_t bytes = 0;
    EXPECT_EQ(mgpu_matmul_workspace_size(m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &bytes), MGPU_OK) << mgpu_last_error();
    return bytes;
  }
  static inline int tuned_ = -1, split_ = -1;
};

TEST_F(PackRuntime, TheTunedProblemAndARaggedNearestOneComputeTheProduct) {
  for (auto [m, n, k, how] : {std::tuple<int, int, int, const char*>{200, 136, 128, "exact"}, {136, 88, 192, "nearest"}}) {
    int entry = -1;
    const char* chosen = nullptr;
    ASSERT_EQ(mgpu_matmul_select(m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &entry, &chosen), MGPU_OK) << mgpu_last_error();
    EXPECT_STREQ(chosen, how);
    Operands o(m, n, k);
    mgpu::core::DeviceBuffer ws(workspace_of(m, n, k));
    ASSERT_EQ(mgpu_matmul(nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN,
                          reinterpret_cast<void*>(ws.ptr()), ws.bytes()),
              MGPU_OK)
        << mgpu_last_error();
    mgpu::core::CudaContext::primary().synchronize();
    EXPECT_LE(o.worst(m, n), 1.0) << m << "x" << n << "x" << k;
  }
}

TEST_F(PackRuntime, ASplitKernelZeroesItsCountersInAWorkspaceFullOfGarbage) {
  const int m = 64, n = 136, k = 256;
  Operands o(m, n, k);
  std::size_t need = 0;  // what the forced entry takes (mgpu_matmul would choose by the problem)
  ASSERT_EQ(mgpu_matmul_entry_workspace_size(split_, m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &need), MGPU_OK)
      << mgpu_last_error();
  mgpu::core::DeviceBuffer ws(need);
  EXPECT_EQ(mgpu_matmul_entry(split_, nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN,
                              reinterpret_cast<void*>(ws.ptr()), need - 1),
            MGPU_ERR_WORKSPACE_TOO_SMALL);
  std::size_t other = 0;  // an entry of bf16 inputs asked for f16 ones
  EXPECT_EQ(mgpu_matmul_entry_workspace_size(split_, m, n, k, MGPU_F16, MGPU_BF16, MGPU_B_KN, &other),
            MGPU_ERR_INVALID_ARGUMENT);
  for (int launch = 0; launch < 2; ++launch) {
    ws.fill_bytes(0xA5);
    ASSERT_EQ(mgpu_matmul_entry(split_, nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN,
                                reinterpret_cast<void*>(ws.ptr()), ws.bytes()),
              MGPU_OK)
        << mgpu_last_error();
    mgpu::core::CudaContext::primary().synchronize();
    EXPECT_LE(o.worst(m, n), 1.0);
  }
}

// A split-K kernel reduces through its workspace: at a problem where its split would be 1 (here K
// of one k-step) it cannot run, so the selection takes another entry and a forced call is refused
// (battery round 18, F13: the nearest entry was the split kernel, which wrote past the workspace).
TEST_F(PackRuntime, ASplitKernelIsNeverChosenWhereItsSplitWouldBeOne) {
  const int m = 64, n = 136, k = 64;
  int entry = -1;
  const char* how = nullptr;
  ASSERT_EQ(mgpu_matmul_select(m, n, 256, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &entry, &how), MGPU_OK);
  EXPECT_EQ(entry, split_);  // the twin: at its own K it is the exact entry
  ASSERT_EQ(mgpu_matmul_select(m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &entry, &how), MGPU_OK) << mgpu_last_error();
  EXPECT_NE(entry, split_);  // the nearest by size, but it cannot run K = 64
  std::size_t need = 0;
  EXPECT_EQ(mgpu_matmul_entry_workspace_size(split_, m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, &need),
            MGPU_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mgpu_last_error()).find("cannot run 64 x 136 x 64"), std::string::npos) << mgpu_last_error();
  Operands o(m, n, k);
  mgpu::core::DeviceBuffer ws(workspace_of(m, n, k));
  ASSERT_EQ(mgpu_matmul(nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN,
                        reinterpret_cast<void*>(ws.ptr()), ws.bytes()),
            MGPU_OK)
      << mgpu_last_error();
  mgpu::core::CudaContext::primary().synchronize();
  EXPECT_LE(o.worst(m, n), 1.0);
}

TEST_F(PackRuntime, EveryRefusalHasItsStatusAndWords) {
  const int m = 200, n = 136, k = 128;
  Operands o(m, n, k);
  const std::size_t need = workspace_of(m, n, k);
  mgpu::core::DeviceBuffer ws(need + 256);
  void* w = reinterpret_cast<void*>(ws.ptr());
  auto call = [&](const void* a, std::int64_t kk, mgpu_dtype in, mgpu_dtype out, int layout, void* wp, std::size_t bytes) {
    return mgpu_matmul(nullptr, a, o.B(), o.C(), m, n, kk, in, out, mgpu_b_layout(layout), wp, bytes);
  };
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need - 1), MGPU_ERR_WORKSPACE_TOO_SMALL);
  EXPECT_NE(std::string(mgpu_last_error()).find("this call needs"), std::string::npos) << mgpu_last_error();
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, nullptr, 0), MGPU_ERR_WORKSPACE_TOO_SMALL);
  EXPECT_EQ(call(static_cast<const char*>(o.A()) + 8, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_MISALIGNED);
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, static_cast<char*>(w) + 64, need), MGPU_ERR_MISALIGNED);
  EXPECT_EQ(call(o.A(), 12, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_MISALIGNED);  // a row of 24 bytes
  EXPECT_EQ(call(o.A(), 0, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(o.A(), std::int64_t(1) << 31, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(nullptr, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(o.A(), k, MGPU_F32, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_UNSUPPORTED_DTYPE);
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, mgpu_dtype(9), MGPU_B_KN, w, need), MGPU_ERR_UNSUPPORTED_DTYPE);
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_BF16, 7, w, need), MGPU_ERR_UNSUPPORTED_LAYOUT);
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_F16, MGPU_B_KN, w, need), MGPU_ERR_NO_KERNEL);  // none of f16 output
  EXPECT_NE(std::string(mgpu_last_error()).find("no sm_90a matmul kernel of bf16 inputs, f16 output"), std::string::npos)
      << mgpu_last_error();
  EXPECT_EQ(mgpu_matmul_entry(tuned_ + 100, nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need),
            MGPU_ERR_INVALID_ARGUMENT);
  g_only_other_arch = true;  // a pack of sm_100a kernels on this (sm_90a) device
  g_other_arch_kernel = g_kernels[0];
  g_other_arch_kernel.arch = "sm_100a";
  g_other_arch_entry = g_entries[0];
  g_other_arch_entry.kernel = 0;
  EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_NO_KERNEL_FOR_ARCH);
  EXPECT_NE(std::string(mgpu_last_error()).find("compute capability 9.0"), std::string::npos) << mgpu_last_error();
  g_only_other_arch = false;
  std::thread([&] {  // a thread of the caller's that made no context current
    EXPECT_EQ(call(o.A(), k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, w, need), MGPU_ERR_NO_CONTEXT);
    EXPECT_NE(std::string(mgpu_last_error()).find("no current CUDA context"), std::string::npos) << mgpu_last_error();
  }).join();
  // Nothing was launched for any of them: C is still the poison.
  std::vector<std::uint16_t> c(std::size_t(m * n));
  o.dc.download(std::as_writable_bytes(std::span(c)));
  for (std::uint16_t x : c) ASSERT_EQ(x, 0xFFFF);
  EXPECT_STREQ(mgpu_status_name(MGPU_ERR_MISALIGNED), "MGPU_ERR_MISALIGNED");
}

TEST_F(PackRuntime, TheEntriesSayWhatThePackHolds) {
  ASSERT_EQ(mgpu_pack_entry_count(), 2);
  mgpu_pack_entry_info info{};
  ASSERT_EQ(mgpu_pack_entry(split_, &info), MGPU_OK);
  EXPECT_STREQ(info.template_name, "matmul_sm90");
  EXPECT_EQ(mgpu_pack_entry(2, &info), MGPU_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mgpu_pack_entry(0, nullptr), MGPU_ERR_INVALID_ARGUMENT);
}

// Last (gtest runs a suite's tests in order): the caller's primary context is released to
// nothing and retained again -- the same handle, a new context with none of the modules loaded
// before. The runtime loads its kernels into the new one (round 17, F9: keyed by handle, every
// later launch failed with CUDA error 400 for the rest of the process).
TEST_F(PackRuntime, ZContextReleasedAndRetainedAgainLoadsItsKernelsAgain) {
  const int m = 200, n = 136, k = 128;
  {
    Operands o(m, n, k);
    mgpu::core::DeviceBuffer ws(workspace_of(m, n, k));
    ASSERT_EQ(mgpu_matmul(nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN,
                          reinterpret_cast<void*>(ws.ptr()), ws.bytes()),
              MGPU_OK)
        << mgpu_last_error();  // the kernel is loaded into the first context
  }
  void* lib = dlopen(MGPU_VCUDA_LIB, RTLD_NOW | RTLD_LOCAL);  // the driver the runtime opened
  ASSERT_NE(lib, nullptr) << dlerror();
  auto release = reinterpret_cast<PFN_cuDevicePrimaryCtxRelease_v11000>(dlsym(lib, "cuDevicePrimaryCtxRelease_v2"));
  auto retain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(dlsym(lib, "cuCtxGetCurrent"));
  ASSERT_TRUE(release && retain && get_current);
  CUcontext before = nullptr, after = nullptr;
  ASSERT_EQ(get_current(&before), CUDA_SUCCESS);
  ASSERT_NE(before, nullptr);
  int released = 0;
  while (released < 1000 && release(0) == CUDA_SUCCESS) ++released;
  ASSERT_GT(released, 0);
  // The thread is still bound to the context released: the runtime says there is none live
  // (before it looks at the operands, which it never reaches).
  void* nowhere = reinterpret_cast<void*>(std::uintptr_t(1) << 20);
  EXPECT_EQ(mgpu_matmul(nullptr, nowhere, nowhere, nowhere, m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN, nowhere, 1 << 20),
            MGPU_ERR_NO_CONTEXT);
  EXPECT_NE(std::string(mgpu_last_error()).find("not live"), std::string::npos) << mgpu_last_error();
  for (int i = 0; i < released; ++i) ASSERT_EQ(retain(&after, 0), CUDA_SUCCESS);
  ASSERT_EQ(after, before);  // the same handle: only its id tells the contexts apart
  Operands o(m, n, k);
  mgpu::core::DeviceBuffer ws(workspace_of(m, n, k));
  ASSERT_EQ(mgpu_matmul(nullptr, o.A(), o.B(), o.C(), m, n, k, MGPU_BF16, MGPU_BF16, MGPU_B_KN,
                        reinterpret_cast<void*>(ws.ptr()), ws.bytes()),
            MGPU_OK)
      << mgpu_last_error();
  mgpu::core::CudaContext::primary().synchronize();
  EXPECT_LE(o.worst(m, n), 1.0);
  dlclose(lib);
}

}  // namespace
