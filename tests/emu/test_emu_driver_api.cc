// The virtual device's driver API as a caller resolves it: cuGetProcAddress answers per CUDA
// version, as the real driver does, so a caller that asks for one ABI and calls another fails
// here (on CPU, in CI) and not first on a GPU. The H100 found the case this guards: at CUDA
// 13.0 "cuCtxSynchronize" resolves to cuCtxSynchronize_v2(CUcontext).
#include <gtest/gtest.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace {

struct DriverApi : ::testing::Test {
  void* lib = nullptr;
  decltype(&::cuGetProcAddress) get_proc = nullptr;
  void SetUp() override {
    lib = dlopen(MGPU_VCUDA_LIB, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    get_proc = reinterpret_cast<decltype(get_proc)>(dlsym(lib, "cuGetProcAddress_v2"));
    ASSERT_NE(get_proc, nullptr);
    auto init = reinterpret_cast<PFN_cuInit_v2000>(resolve("cuInit", 2000));
    ASSERT_EQ(init(0), CUDA_SUCCESS);
  }
  void* resolve(const char* name, int version, CUdriverProcAddressQueryResult* status = nullptr) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult s{};
    get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &s);
    if (status) *status = s;
    return fn;
  }
  CUcontext primary() {
    auto retain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(resolve("cuDevicePrimaryCtxRetain", 7000));
    CUcontext ctx = nullptr;
    EXPECT_EQ(retain(&ctx, 0), CUDA_SUCCESS);
    return ctx;
  }
};

TEST_F(DriverApi, CtxSynchronizeAtCuda13TakesTheContextAndRefusesAHandleThatIsNone) {
  CUcontext ctx = primary();
  auto sync13 = reinterpret_cast<PFN_cuCtxSynchronize_v13000>(resolve("cuCtxSynchronize", 13000));
  ASSERT_NE(sync13, nullptr);
  EXPECT_EQ(sync13(ctx), CUDA_SUCCESS);
  EXPECT_EQ(sync13(nullptr), CUDA_SUCCESS);  // NULL: the current context
  int not_a_context = 0;
  EXPECT_EQ(sync13(reinterpret_cast<CUcontext>(&not_a_context)), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(DriverApi, EachVersionGetsItsOwnAbi) {
  void* old_abi = resolve("cuCtxSynchronize", 2000);
  void* new_abi = resolve("cuCtxSynchronize", 13000);
  ASSERT_NE(old_abi, nullptr);
  EXPECT_NE(old_abi, new_abi);
  EXPECT_EQ(resolve("cuCtxSynchronize", 12080), old_abi);  // the newest ABI not newer than asked
  EXPECT_EQ(resolve("cuCtxSynchronize", 13010), new_abi);
  auto sync2 = reinterpret_cast<PFN_cuCtxSynchronize_v2000>(old_abi);
  primary();
  EXPECT_EQ(sync2(), CUDA_SUCCESS);
}

TEST_F(DriverApi, TooOldAVersionAndUnknownNamesAreRefused) {
  CUdriverProcAddressQueryResult status{};
  EXPECT_EQ(resolve("cuCtxSynchronize", 1000, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(resolve("cuNoSuchEntryPoint", 13000, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

// cuModuleUnload frees the module: its handle, and the functions taken from it, are refused
// afterwards (until 2026-11-23 it did nothing, and a verifying worker, loading a module per
// config, grew by ~200 KB per verification -- 8 GB over a sweep of the Hopper space).
TEST_F(DriverApi, UnloadFreesTheModuleAndItsHandlesAreRefusedAfter) {
  primary();
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
  auto unload = reinterpret_cast<PFN_cuModuleUnload_v2000>(resolve("cuModuleUnload", 2000));
  auto get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(resolve("cuModuleGetFunction", 2000));
  auto get_global = reinterpret_cast<PFN_cuModuleGetGlobal_v3020>(resolve("cuModuleGetGlobal", 3020));
  ASSERT_TRUE(load && unload && get_function && get_global);
  const char* ptx =
      ".version 8.0\n.target sm_90a\n.address_size 64\n.global .u32 counter;\n"
      ".visible .entry k() { ret; }\n";
  CUmodule mod = nullptr;
  ASSERT_EQ(load(&mod, ptx), CUDA_SUCCESS);
  CUfunction f = nullptr;
  EXPECT_EQ(get_function(&f, mod, "k"), CUDA_SUCCESS);
  CUdeviceptr counter = 0;
  size_t bytes = 0;
  EXPECT_EQ(get_global(&counter, &bytes, mod, "counter"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  EXPECT_EQ(unload(mod), CUDA_SUCCESS);
  EXPECT_EQ(get_function(&f, mod, "k"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(get_global(&counter, &bytes, mod, "counter"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(unload(mod), CUDA_ERROR_INVALID_HANDLE);
  // Load and unload as a worker does, many times: each load works (nothing left half-freed).
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(load(&mod, ptx), CUDA_SUCCESS) << i;
    ASSERT_EQ(unload(mod), CUDA_SUCCESS) << i;
  }
}

// The virtual device's memory is this process's: a request past the 16 GiB it reports is CUDA's
// out-of-memory (it was a bad_alloc through the C ABI), and the device goes on working after it.
TEST_F(DriverApi, AllocationPastTheDevicesMemoryIsOutOfMemoryNotACrash) {
  primary();
  auto total = reinterpret_cast<PFN_cuDeviceTotalMem_v3020>(resolve("cuDeviceTotalMem", 3020));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto free_ = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
  ASSERT_TRUE(total && alloc && free_);
  size_t have = 0;
  ASSERT_EQ(total(&have, 0), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  EXPECT_EQ(alloc(&p, have + 1), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(alloc(&p, size_t{1} << 62), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(alloc(&p, 1 << 20), CUDA_SUCCESS);  // not sticky: the context is intact
  EXPECT_EQ(free_(p), CUDA_SUCCESS);
}

// CUDA's launch limits hold at the driver too (the virtual device built a grid of 2^31 CTAs up
// front before), and a knob of the environment set to what it does not take fails the launch
// instead of falling back to its default (MGPU_EMU_RACES=yes was race detection off).
TEST_F(DriverApi, LaunchesBeyondCudasLimitsOrWithABadKnobAreInvalidValues) {
  primary();
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
  auto get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(resolve("cuModuleGetFunction", 2000));
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(resolve("cuLaunchKernel", 4000));
  ASSERT_TRUE(load && get_function && launch);
  CUmodule mod = nullptr;
  ASSERT_EQ(load(&mod, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { ret; }\n"), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(get_function(&f, mod, "k"), CUDA_SUCCESS);
  auto run = [&](unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz) {
    return launch(f, gx, gy, gz, bx, by, bz, 0, nullptr, nullptr, nullptr);
  };
  EXPECT_EQ(run(1u << 31, 1, 1, 32, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(run(1, 65536, 1, 32, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(run(1, 1, 0, 32, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(run(2048, 1024, 1, 32, 1, 1), CUDA_ERROR_INVALID_VALUE);  // 2^21 CTAs: more than the device runs
  EXPECT_EQ(run(1, 1, 1, 1025, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(run(1, 1, 1, 32, 32, 2), CUDA_ERROR_INVALID_VALUE);       // 2048 threads
  EXPECT_EQ(run(1, 1, 1, 1, 1, 65), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(run(4, 2, 1, 32, 2, 1), CUDA_SUCCESS);
  for (const char* bad : {"MGPU_EMU_RACES=yes", "MGPU_EMU_SEED=-1", "MGPU_EMU_SEED=4x", "MGPU_EMU_REPORTS=loud",
                          "MGPU_EMU_STEP_LIMIT=0"}) {
    std::string kv = bad;
    const std::string name = kv.substr(0, kv.find('='));
    setenv(name.c_str(), kv.c_str() + name.size() + 1, 1);
    EXPECT_EQ(run(1, 1, 1, 32, 1, 1), CUDA_ERROR_INVALID_VALUE) << bad;
    unsetenv(name.c_str());
  }
  EXPECT_EQ(run(1, 1, 1, 32, 1, 1), CUDA_SUCCESS);
}

}  // namespace
