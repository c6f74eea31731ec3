// The virtual device's driver API as a caller resolves it: cuGetProcAddress answers per CUDA
// version, as the real driver does, so a caller that asks for one ABI and calls another fails
// here (on CPU, in CI) and not first on a GPU. The H100 found the case this guards: at CUDA
// 13.0 "cuCtxSynchronize" resolves to cuCtxSynchronize_v2(CUcontext).
#include <gtest/gtest.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

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
  // A kernel that does nothing, `k()`, loaded into the primary context: what the launch and
  // attribute tests call. nullptr (with the failure recorded) if it does not load.
  CUfunction empty_kernel() {
    auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
    auto get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(resolve("cuModuleGetFunction", 2000));
    CUmodule mod = nullptr;
    CUfunction f = nullptr;
    EXPECT_TRUE(load && get_function);
    if (!load || !get_function) return nullptr;
    EXPECT_EQ(load(&mod, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { ret; }\n"), CUDA_SUCCESS);
    EXPECT_EQ(get_function(&f, mod, "k"), CUDA_SUCCESS);
    return f;
  }
  // The primary context, retained and made current to the calling thread.
  CUcontext primary() {
    auto retain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(resolve("cuDevicePrimaryCtxRetain", 7000));
    auto set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(resolve("cuCtxSetCurrent", 4000));
    CUcontext ctx = nullptr;
    EXPECT_EQ(retain(&ctx, 0), CUDA_SUCCESS);
    EXPECT_EQ(set_current(ctx), CUDA_SUCCESS);
    return ctx;
  }
  // Releases every retain of the primary context (this process's earlier tests' too): how many.
  int release_all() {
    auto release = reinterpret_cast<PFN_cuDevicePrimaryCtxRelease_v11000>(resolve("cuDevicePrimaryCtxRelease", 11000));
    int released = 0;
    while (released < 1000 && release(0) == CUDA_SUCCESS) ++released;
    return released;
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

TEST_F(DriverApi, CtxGetDeviceNamesTheOneDeviceOfALiveContextInEitherAbi) {
  auto get12 = reinterpret_cast<PFN_cuCtxGetDevice_v2000>(resolve("cuCtxGetDevice", 12000));
  auto get13 = reinterpret_cast<PFN_cuCtxGetDevice_v13000>(resolve("cuCtxGetDevice", 13000));
  ASSERT_NE(get12, nullptr);
  ASSERT_NE(get13, nullptr);
  EXPECT_NE(reinterpret_cast<void*>(get12), reinterpret_cast<void*>(get13));
  CUdevice_v1 d12 = -1;
  CUdevice d13 = -1;
  CUcontext ctx = primary();
  EXPECT_EQ(get12(&d12), CUDA_SUCCESS);
  EXPECT_EQ(d12, 0);
  EXPECT_EQ(get13(&d13, ctx), CUDA_SUCCESS);
  EXPECT_EQ(d13, 0);
  d13 = -1;
  EXPECT_EQ(get13(&d13, nullptr), CUDA_SUCCESS);  // NULL: the current context
  EXPECT_EQ(d13, 0);
  int not_a_context = 0;
  EXPECT_EQ(get13(&d13, reinterpret_cast<CUcontext>(&not_a_context)), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(get12(nullptr), CUDA_ERROR_INVALID_VALUE);
  // Every retain released: the thread's binding is to a context that is gone, no device; unbound,
  // no context at all. The retains are then given back as they were.
  const int released = release_all();
  EXPECT_EQ(get12(&d12), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(get13(&d13, nullptr), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(get13(&d13, ctx), CUDA_ERROR_INVALID_CONTEXT);  // named: no live context
  auto set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(resolve("cuCtxSetCurrent", 4000));
  EXPECT_EQ(set_current(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(get12(&d12), CUDA_ERROR_INVALID_CONTEXT);
  for (int i = 0; i < released; ++i) primary();
}

// A context handle that is no live context is CUDA_ERROR_INVALID_CONTEXT wherever one is taken,
// and changes nothing: the device's memory survives a bogus cuCtxDestroy or a release of a device
// that does not exist (round 17, F10). A context released to nothing is gone (the thread's
// binding to it stays: CUDA_ERROR_CONTEXT_IS_DESTROYED) and, made again, has the same handle and
// a new id (cuCtxGetId).
TEST_F(DriverApi, ContextsMustBeLiveAndReleaseNothingElse) {
  auto destroy = reinterpret_cast<PFN_cuCtxDestroy_v4000>(resolve("cuCtxDestroy", 4000));
  auto release = reinterpret_cast<PFN_cuDevicePrimaryCtxRelease_v11000>(resolve("cuDevicePrimaryCtxRelease", 11000));
  auto set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(resolve("cuCtxSetCurrent", 4000));
  auto get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(resolve("cuCtxGetCurrent", 4000));
  auto push = reinterpret_cast<PFN_cuCtxPushCurrent_v4000>(resolve("cuCtxPushCurrent", 4000));
  auto get_id = reinterpret_cast<PFN_cuCtxGetId_v12000>(resolve("cuCtxGetId", 12000));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto memset8 = reinterpret_cast<PFN_cuMemsetD8_v3020>(resolve("cuMemsetD8", 3020));
  auto mem_free = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
  auto error_string = reinterpret_cast<PFN_cuGetErrorString_v6000>(resolve("cuGetErrorString", 6000));
  using LastError = CUresult (*)(const char**);
  auto last = reinterpret_cast<LastError>(resolve("mgpuEmuLastError", 2000));
  ASSERT_TRUE(destroy && release && set_current && get_current && push && get_id && alloc && memset8 && mem_free &&
              error_string && last);
  auto reason = [&] {
    const char* text = nullptr;
    EXPECT_EQ(last(&text), CUDA_SUCCESS);
    return std::string(text ? text : "");
  };
  CUcontext ctx = primary();
  CUdeviceptr p = 0;
  ASSERT_EQ(alloc(&p, 4096), CUDA_SUCCESS);
  int not_a_context = 0;
  CUcontext bogus = reinterpret_cast<CUcontext>(&not_a_context);
  EXPECT_EQ(destroy(bogus), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(reason(), "cuCtxDestroy: the handle is no live context");
  EXPECT_EQ(release(5), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(set_current(bogus), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(push(bogus), CUDA_ERROR_INVALID_CONTEXT);
  unsigned long long id = 0, again = 0;
  EXPECT_EQ(get_id(bogus, &id), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(memset8(p, 0, 4096), CUDA_SUCCESS);  // the allocation survived all of them
  EXPECT_EQ(set_current(nullptr), CUDA_SUCCESS);  // the twins
  EXPECT_EQ(set_current(ctx), CUDA_SUCCESS);
  ASSERT_EQ(get_id(ctx, &id), CUDA_SUCCESS);
  ASSERT_EQ(get_id(nullptr, &again), CUDA_SUCCESS);
  EXPECT_EQ(again, id);
  EXPECT_EQ(mem_free(p + 64), CUDA_ERROR_INVALID_VALUE);  // round 17, F11: its own reason
  EXPECT_EQ(reason(), "cuMemFree: the address is no allocation's start");
  EXPECT_EQ(mem_free(p), CUDA_SUCCESS);
  const char* words = nullptr;
  EXPECT_EQ(error_string(CUresult(9999), &words), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(reason(), "cuGetErrorString: no error 9999");
  EXPECT_EQ(error_string(CUDA_ERROR_INVALID_CONTEXT, &words), CUDA_SUCCESS);
  EXPECT_EQ(error_string(CUDA_ERROR_UNKNOWN, &words), CUDA_SUCCESS);  // every code cuda.h defines has a name (F21)
  EXPECT_STREQ(words, "CUDA_ERROR_UNKNOWN");
  EXPECT_EQ(error_string(CUDA_ERROR_CONTEXT_IS_DESTROYED, &words), CUDA_SUCCESS);
  // Released to nothing (this process's earlier retains too), then made again.
  const int released = release_all();
  ASSERT_GT(released, 0);
  EXPECT_EQ(release(0), CUDA_ERROR_INVALID_CONTEXT);  // nothing left to release
  EXPECT_EQ(destroy(ctx), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext bound = nullptr;
  EXPECT_EQ(get_current(&bound), CUDA_SUCCESS);
  EXPECT_EQ(bound, ctx);  // still bound, to a context that is gone
  EXPECT_EQ(get_id(nullptr, &again), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  for (int i = 0; i < released; ++i) EXPECT_EQ(primary(), ctx);
  ASSERT_EQ(get_id(ctx, &again), CUDA_SUCCESS);
  EXPECT_NE(again, id);
}

// Each thread has its own current context (CUDA Driver API, "Context Management"; round 18,
// F20): a thread that bound none is refused every call that acts in the current context --
// CUDA_ERROR_INVALID_CONTEXT -- while a call naming a stream of the context works from it; the
// same calls succeed once it binds the context. cuCtxSetCurrent(NULL) unbinds this thread only;
// cuCtxPopCurrent of an empty stack is refused.
TEST_F(DriverApi, EachThreadHasItsOwnCurrentContext) {
  CUcontext ctx = primary();
  CUfunction f = empty_kernel();
  ASSERT_NE(f, nullptr);
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto mem_free = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
  auto memset8 = reinterpret_cast<PFN_cuMemsetD8_v3020>(resolve("cuMemsetD8", 3020));
  auto memset_async = reinterpret_cast<PFN_cuMemsetD8Async_v3020>(resolve("cuMemsetD8Async", 3020));
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(resolve("cuLaunchKernel", 4000));
  auto stream_create = reinterpret_cast<PFN_cuStreamCreate_v2000>(resolve("cuStreamCreate", 2000));
  auto stream_destroy = reinterpret_cast<PFN_cuStreamDestroy_v4000>(resolve("cuStreamDestroy", 4000));
  auto event_create = reinterpret_cast<PFN_cuEventCreate_v2000>(resolve("cuEventCreate", 2000));
  auto sync = reinterpret_cast<PFN_cuCtxSynchronize_v2000>(resolve("cuCtxSynchronize", 12000));
  auto get_device = reinterpret_cast<PFN_cuCtxGetDevice_v2000>(resolve("cuCtxGetDevice", 12000));
  auto get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(resolve("cuCtxGetCurrent", 4000));
  auto set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(resolve("cuCtxSetCurrent", 4000));
  auto push = reinterpret_cast<PFN_cuCtxPushCurrent_v4000>(resolve("cuCtxPushCurrent", 4000));
  auto pop = reinterpret_cast<PFN_cuCtxPopCurrent_v4000>(resolve("cuCtxPopCurrent", 4000));
  ASSERT_TRUE(alloc && mem_free && memset8 && memset_async && load && launch && stream_create && stream_destroy &&
              event_create && sync && get_device && get_current && set_current && push && pop);
  CUstream s = nullptr;
  ASSERT_EQ(stream_create(&s, 0), CUDA_SUCCESS);
  CUdeviceptr x = 0;
  ASSERT_EQ(alloc(&x, 64), CUDA_SUCCESS);
  const char* ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k2() { ret; }\n";

  // The calls in the current context, each CUDA_SUCCESS or the error asked for.
  auto in_current = [&](CUresult want, std::vector<std::string>& wrong) {
    CUdeviceptr p = 0;
    CUmodule mod = nullptr;
    CUstream made = nullptr;
    CUevent e = nullptr;
    CUdevice d = -1;
    auto expect = [&](const char* what, CUresult got) {
      if (got != want) wrong.push_back(std::string(what) + " gave " + std::to_string(int(got)));
    };
    expect("cuMemAlloc", alloc(&p, 64));
    expect("cuMemsetD8", memset8(x, 1, 64));
    expect("cuMemsetD8Async(NULL stream)", memset_async(x, 1, 64, nullptr));
    expect("cuModuleLoadData", load(&mod, ptx));
    expect("cuLaunchKernel(NULL stream)", launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
    expect("cuStreamCreate", stream_create(&made, 0));
    expect("cuEventCreate", event_create(&e, 0));
    expect("cuCtxSynchronize", sync());
    expect("cuCtxGetDevice", get_device(&d));
    // A stream names its context: these work from any thread (and the twins' frees).
    if (launch(f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr) != CUDA_SUCCESS) wrong.push_back("launch on a stream failed");
    if (memset_async(x, 2, 64, s) != CUDA_SUCCESS) wrong.push_back("memset on a stream failed");
    if (p && mem_free(p) != CUDA_SUCCESS) wrong.push_back("cuMemFree failed");
    if (made && stream_destroy(made) != CUDA_SUCCESS) wrong.push_back("cuStreamDestroy failed");
  };
  std::vector<std::string> unbound, bound, pops;
  CUcontext seen = ctx;
  std::thread([&] {
    get_current(&seen);  // a new thread has none
    in_current(CUDA_ERROR_INVALID_CONTEXT, unbound);
    CUcontext popped = nullptr;
    if (pop(&popped) != CUDA_ERROR_INVALID_CONTEXT) pops.push_back("pop of an empty stack succeeded");
    if (push(ctx) != CUDA_SUCCESS) pops.push_back("push failed");
    in_current(CUDA_SUCCESS, bound);  // the twin
    if (pop(&popped) != CUDA_SUCCESS || popped != ctx) pops.push_back("pop did not give the context pushed");
    if (set_current(ctx) != CUDA_SUCCESS) pops.push_back("cuCtxSetCurrent failed");
    in_current(CUDA_SUCCESS, bound);
  }).join();
  EXPECT_EQ(seen, nullptr);
  EXPECT_EQ(unbound, std::vector<std::string>{});
  EXPECT_EQ(bound, std::vector<std::string>{});
  EXPECT_EQ(pops, std::vector<std::string>{});
  // This thread was not touched by the other's binding; unbound, it is refused as that one was.
  CUcontext here = nullptr;
  EXPECT_EQ(get_current(&here), CUDA_SUCCESS);
  EXPECT_EQ(here, ctx);
  EXPECT_EQ(set_current(nullptr), CUDA_SUCCESS);
  std::vector<std::string> after_unbind;
  in_current(CUDA_ERROR_INVALID_CONTEXT, after_unbind);
  EXPECT_EQ(after_unbind, std::vector<std::string>{});
  EXPECT_EQ(set_current(ctx), CUDA_SUCCESS);
  EXPECT_EQ(stream_destroy(s), CUDA_SUCCESS);
  EXPECT_EQ(mem_free(x), CUDA_SUCCESS);
}

// The virtual device has one context, its primary: cuCtxCreate is refused, not answered with the
// primary as though it were new (round 19, F31: two "created" contexts were one). Its twin, the
// primary retained and made current, serves the same calls.
TEST_F(DriverApi, CuCtxCreateIsRefusedForTheOneContextThereIs) {
  auto create = reinterpret_cast<PFN_cuCtxCreate_v12050>(resolve("cuCtxCreate", 12050));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto mem_free = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
  ASSERT_TRUE(create && alloc && mem_free);
  CUcontext made = nullptr;
  std::thread([&] {
    EXPECT_EQ(create(&made, nullptr, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
    CUdeviceptr p = 0;
    EXPECT_EQ(alloc(&p, 64), CUDA_ERROR_INVALID_CONTEXT);  // nothing was made current
  }).join();
  EXPECT_EQ(made, nullptr);
  primary();
  CUdeviceptr p = 0;
  ASSERT_EQ(alloc(&p, 64), CUDA_SUCCESS);
  EXPECT_EQ(mem_free(p), CUDA_SUCCESS);
}

// Round 19, F33: an event never made, or destroyed, is CUDA_ERROR_INVALID_HANDLE wherever one is
// taken, and flags cuda.h does not define are CUDA_ERROR_INVALID_VALUE; a context lost to a fault
// says so in every later refusal, not the reason of whichever call came before.
TEST_F(DriverApi, EventsMustExistAndFlagsBeKnown) {
  primary();
  auto create = reinterpret_cast<PFN_cuEventCreate_v2000>(resolve("cuEventCreate", 2000));
  auto destroy = reinterpret_cast<PFN_cuEventDestroy_v4000>(resolve("cuEventDestroy", 4000));
  auto record = reinterpret_cast<PFN_cuEventRecord_v2000>(resolve("cuEventRecord", 2000));
  auto sync = reinterpret_cast<PFN_cuEventSynchronize_v2000>(resolve("cuEventSynchronize", 2000));
  auto wait = reinterpret_cast<PFN_cuStreamWaitEvent_v3020>(resolve("cuStreamWaitEvent", 3020));
  auto stream_create = reinterpret_cast<PFN_cuStreamCreate_v2000>(resolve("cuStreamCreate", 2000));
  ASSERT_TRUE(create && destroy && record && sync && wait && stream_create);
  CUevent e = nullptr, bad = nullptr;
  ASSERT_EQ(create(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(create(&bad, 0xff), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(&bad, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);  // needs DISABLE_TIMING
  EXPECT_EQ(record(e, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(wait(nullptr, e, 0), CUDA_SUCCESS);
  EXPECT_EQ(wait(nullptr, e, 7), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(sync(e), CUDA_SUCCESS);
  const CUevent never = reinterpret_cast<CUevent>(0x99);
  EXPECT_EQ(record(never, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(destroy(e), CUDA_SUCCESS);
  EXPECT_EQ(destroy(e), CUDA_ERROR_INVALID_HANDLE);  // destroyed already
  EXPECT_EQ(sync(e), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(wait(nullptr, e, 0), CUDA_ERROR_INVALID_HANDLE);
  CUstream s = nullptr;
  EXPECT_EQ(stream_create(&s, 0x10), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
}

// Round 20, F51: the polls and the memory query programs make at start-up. A stream has no work
// pending and an event has completed (every launch finished when its call returned); memory is
// the device's 16 GiB less what is allocated; a handle never made is refused.
TEST_F(DriverApi, StreamAndEventQueriesAndMemoryInfo) {
  primary();
  auto stream_query = reinterpret_cast<PFN_cuStreamQuery_v2000>(resolve("cuStreamQuery", 2000));
  auto event_query = reinterpret_cast<PFN_cuEventQuery_v2000>(resolve("cuEventQuery", 2000));
  auto mem_info = reinterpret_cast<PFN_cuMemGetInfo_v3020>(resolve("cuMemGetInfo", 3020));
  auto create = reinterpret_cast<PFN_cuEventCreate_v2000>(resolve("cuEventCreate", 2000));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto mem_free = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
  ASSERT_TRUE(stream_query && event_query && mem_info && create && alloc && mem_free);
  EXPECT_EQ(resolve("cuMemGetInfo", 2000), nullptr);  // only the size_t ABI of CUDA 3.2 is served
  EXPECT_EQ(stream_query(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(stream_query(reinterpret_cast<CUstream>(0x77)), CUDA_ERROR_INVALID_HANDLE);
  CUevent e = nullptr;
  ASSERT_EQ(create(&e, 0), CUDA_SUCCESS);
  EXPECT_EQ(event_query(e), CUDA_SUCCESS);
  EXPECT_EQ(event_query(reinterpret_cast<CUevent>(0x99)), CUDA_ERROR_INVALID_HANDLE);
  size_t free_before = 0, total = 0, free_after = 0;
  ASSERT_EQ(mem_info(&free_before, &total), CUDA_SUCCESS);
  EXPECT_EQ(total, size_t{16} << 30);
  CUdeviceptr p = 0;
  ASSERT_EQ(alloc(&p, 1 << 20), CUDA_SUCCESS);
  ASSERT_EQ(mem_info(&free_after, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_before - free_after, size_t{1} << 20);
  EXPECT_EQ(mem_free(p), CUDA_SUCCESS);
  EXPECT_EQ(mem_info(nullptr, &total), CUDA_ERROR_INVALID_VALUE);
}

// A context released to nothing takes its streams with it: a stream made in it is no stream of
// the context retained again (CUDA_ERROR_INVALID_HANDLE); a thread still bound to the released
// context is told so (CUDA_ERROR_CONTEXT_IS_DESTROYED), and is served again once it is retained.
TEST_F(DriverApi, AReleasedContextTakesItsStreamsAndABindingToItIsRefused) {
  primary();
  auto stream_create = reinterpret_cast<PFN_cuStreamCreate_v2000>(resolve("cuStreamCreate", 2000));
  auto sync = reinterpret_cast<PFN_cuStreamSynchronize_v2000>(resolve("cuStreamSynchronize", 2000));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto mem_free = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
  auto retain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(resolve("cuDevicePrimaryCtxRetain", 7000));
  ASSERT_TRUE(stream_create && sync && alloc && mem_free && retain);
  CUstream s = nullptr;
  ASSERT_EQ(stream_create(&s, 0), CUDA_SUCCESS);
  EXPECT_EQ(sync(s), CUDA_SUCCESS);
  const int released = release_all();
  ASSERT_GT(released, 0);
  CUdeviceptr p = 0;
  EXPECT_EQ(alloc(&p, 64), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(sync(nullptr), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  CUcontext again = nullptr;
  for (int i = 0; i < released; ++i) ASSERT_EQ(retain(&again, 0), CUDA_SUCCESS);  // binds nothing new
  EXPECT_EQ(sync(s), CUDA_ERROR_INVALID_HANDLE);  // the stream went with its context
  EXPECT_EQ(sync(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(alloc(&p, 64), CUDA_SUCCESS);  // the binding serves the context made again
  EXPECT_EQ(mem_free(p), CUDA_SUCCESS);
}

// A byte count near 2^64 is CUDA_ERROR_INVALID_VALUE, not a range check that wraps and a write
// over the caller's heap (battery round 18, F14); the same calls in range succeed.
TEST_F(DriverApi, HugeCountsAreInvalidValuesNotCrashes) {
  primary();
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto d8 = reinterpret_cast<PFN_cuMemsetD8_v3020>(resolve("cuMemsetD8", 3020));
  auto d16 = reinterpret_cast<PFN_cuMemsetD16_v3020>(resolve("cuMemsetD16", 3020));
  auto d32 = reinterpret_cast<PFN_cuMemsetD32_v3020>(resolve("cuMemsetD32", 3020));
  auto htod = reinterpret_cast<PFN_cuMemcpyHtoD_v3020>(resolve("cuMemcpyHtoD", 3020));
  auto dtoh = reinterpret_cast<PFN_cuMemcpyDtoH_v3020>(resolve("cuMemcpyDtoH", 3020));
  auto dtod = reinterpret_cast<PFN_cuMemcpyDtoD_v3020>(resolve("cuMemcpyDtoD", 3020));
  ASSERT_TRUE(alloc && d8 && d16 && d32 && htod && dtoh && dtod);
  CUdeviceptr p = 0;
  ASSERT_EQ(alloc(&p, 256), CUDA_SUCCESS);
  char buf[256] = {};
  const std::size_t all = ~std::size_t(0);
  EXPECT_EQ(d8(p + 16, 0, all), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d16(p, 0, (std::size_t(1) << 63) + 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d32(p, 0, (std::size_t(1) << 62) + 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(htod(p + 16, buf, all), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(dtoh(buf, p + 16, all), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(dtod(p + 16, p, all), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(d8(p + 16, 0, 240), CUDA_SUCCESS);  // the twins: the rest of the allocation
  EXPECT_EQ(d16(p, 0, 128), CUDA_SUCCESS);
  EXPECT_EQ(d32(p, 0, 64), CUDA_SUCCESS);
  EXPECT_EQ(htod(p + 16, buf, 240), CUDA_SUCCESS);
  EXPECT_EQ(dtoh(buf, p + 16, 240), CUDA_SUCCESS);
  EXPECT_EQ(dtod(p + 128, p, 128), CUDA_SUCCESS);
  EXPECT_EQ(d8(p + 16, 0, 241), CUDA_ERROR_INVALID_VALUE);  // one byte past
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
  using LastError = CUresult (*)(const char**);
  auto last = reinterpret_cast<LastError>(resolve("mgpuEmuLastError", 2000));
  const char* why = nullptr;
  ASSERT_EQ(last(&why), CUDA_SUCCESS);  // its own reason, not an earlier call's (round 18, F21)
  EXPECT_STREQ(why, "cuGetProcAddress: cuCtxSynchronize has no entry point as old as CUDA version 1000");
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
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(resolve("cuLaunchKernel", 4000));
  ASSERT_TRUE(launch);
  CUfunction f = empty_kernel();
  ASSERT_NE(f, nullptr);
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

// Round 18, F20: a cluster of more than the portable 8 CTAs needs the function's
// NON_PORTABLE_CLUSTER_SIZE_ALLOWED and 16 is the most; a REQUIRED_CLUSTER_* shape is the only
// one the function runs with; a launch attribute id cuda.h does not define is refused. Each
// refusal beside the launch the driver takes.
TEST_F(DriverApi, ClusterSizesFollowTheFunctionsAttributesAndUnknownLaunchAttributesAreRefused) {
  primary();
  auto launch_ex = reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(resolve("cuLaunchKernelEx", 11060));
  auto set_attr = reinterpret_cast<PFN_cuFuncSetAttribute_v9000>(resolve("cuFuncSetAttribute", 9000));
  ASSERT_TRUE(launch_ex && set_attr);
  CUfunction f = empty_kernel();
  ASSERT_NE(f, nullptr);
  auto run = [&](unsigned cluster_x, CUlaunchAttributeID other = CU_LAUNCH_ATTRIBUTE_IGNORE) {
    CUlaunchAttribute attrs[2] = {};
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = cluster_x;
    attrs[0].value.clusterDim.y = 1;
    attrs[0].value.clusterDim.z = 1;
    attrs[1].id = other;
    CUlaunchConfig c = {};
    c.gridDimX = 32;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 32;
    c.blockDimY = c.blockDimZ = 1;
    c.attrs = attrs;
    c.numAttrs = 2;
    return launch_ex(&c, f, nullptr, nullptr);
  };
  EXPECT_EQ(run(8), CUDA_SUCCESS);
  EXPECT_EQ(run(16), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  EXPECT_EQ(run(8, static_cast<CUlaunchAttributeID>(99)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(run(8, CU_LAUNCH_ATTRIBUTE_PRIORITY), CUDA_SUCCESS);
  ASSERT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), CUDA_SUCCESS);
  EXPECT_EQ(run(16), CUDA_SUCCESS);
  EXPECT_EQ(run(32), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  ASSERT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2), CUDA_SUCCESS);
  ASSERT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 1), CUDA_SUCCESS);
  ASSERT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 1), CUDA_SUCCESS);
  EXPECT_EQ(run(4), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  EXPECT_EQ(run(2), CUDA_SUCCESS);
}

// Round 18, F20: cuFuncSetAttribute sets what the driver lets a caller set; a read-only attribute
// and an id outside CUfunction_attribute are refused, as are values out of an attribute's range.
TEST_F(DriverApi, FunctionAttributesAreSetOnlyWhereTheDriverLets) {
  primary();
  auto set_attr = reinterpret_cast<PFN_cuFuncSetAttribute_v9000>(resolve("cuFuncSetAttribute", 9000));
  auto get_attr = reinterpret_cast<PFN_cuFuncGetAttribute_v2020>(resolve("cuFuncGetAttribute", 2020));
  ASSERT_TRUE(set_attr && get_attr);
  CUfunction f = empty_kernel();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 32), CUDA_ERROR_INVALID_VALUE);          // read-only
  EXPECT_EQ(set_attr(f, static_cast<CUfunction_attribute>(99), 1), CUDA_ERROR_INVALID_VALUE);  // no attribute
  EXPECT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50), CUDA_SUCCESS);
  EXPECT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024), CUDA_SUCCESS);
  EXPECT_EQ(set_attr(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), CUDA_SUCCESS);
  int v = -1;
  EXPECT_EQ(get_attr(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f), CUDA_SUCCESS);
  EXPECT_EQ(v, 100 * 1024);
  EXPECT_EQ(get_attr(&v, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, f), CUDA_SUCCESS);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(get_attr(&v, static_cast<CUfunction_attribute>(99), f), CUDA_ERROR_INVALID_VALUE);
}

// Round 18, F21: an entry point is not found at a CUDA version older than its first (cuCtxGetId
// is CUDA 12.0's), and flags are one of the three cuGetProcAddress defines.
TEST_F(DriverApi, EntryPointsExistFromTheirFirstVersionAndFlagsAreChecked) {
  CUdriverProcAddressQueryResult status{};
  EXPECT_EQ(resolve("cuCtxGetId", 11080, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_NE(resolve("cuCtxGetId", 12000, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
  EXPECT_EQ(resolve("cuLaunchKernelEx", 11050), nullptr);
  EXPECT_NE(resolve("cuLaunchKernelEx", 11060), nullptr);
  EXPECT_NE(resolve("cuDeviceGetCount", 2000), nullptr);  // there from the start, one ABI
  // Round 19, F32: where an ABI changed under one name, only the one implemented is served --
  // cuMemAlloc's 32-bit ABI of CUDA 2.0 is not, the 3.2 one (64-bit pointers and sizes) is.
  EXPECT_EQ(resolve("cuMemAlloc", 2000, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_NE(resolve("cuMemAlloc", 3020), nullptr);
  EXPECT_EQ(resolve("cuMemcpyHtoD", 3000), nullptr);
  EXPECT_EQ(resolve("cuCtxCreate", 11040), nullptr);  // the affinity ABI
  // cuGetProcAddress's own first ABI has no status argument: the 11.3 one takes four.
  using GetProc11030 = CUresult (*)(const char*, void**, int, cuuint64_t);
  auto old_get_proc = reinterpret_cast<GetProc11030>(resolve("cuGetProcAddress", 11030));
  ASSERT_NE(old_get_proc, nullptr);
  EXPECT_NE(reinterpret_cast<void*>(old_get_proc), resolve("cuGetProcAddress", 12000));
  void* init = nullptr;
  EXPECT_EQ(old_get_proc("cuInit", &init, 11030, CU_GET_PROC_ADDRESS_DEFAULT), CUDA_SUCCESS);
  EXPECT_NE(init, nullptr);
  EXPECT_EQ(resolve("cuGetProcAddress", 11020), nullptr);
  void* fn = nullptr;
  EXPECT_EQ(get_proc("cuMemAlloc", &fn, 13000, 4, &status), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get_proc("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status), CUDA_SUCCESS);
  EXPECT_NE(fn, nullptr);
}

// Round 18, F20: encoding a tensor map is a driver call like the others: before cuInit it is
// CUDA_ERROR_NOT_INITIALIZED. (gtest runs each test in a process of its own under ctest; run
// alone, this test's first call comes before any cuInit of this process.)
TEST(DriverApiBeforeInit, TensorMapEncodingNeedsCuInit) {
  void* lib = dlopen(MGPU_VCUDA_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(dlsym(lib, "cuTensorMapEncodeTiled"));
  auto init = reinterpret_cast<PFN_cuInit_v2000>(dlsym(lib, "cuInit"));
  ASSERT_TRUE(encode && init);
  alignas(64) CUtensorMap map{};
  alignas(128) static std::uint16_t data[64 * 64];
  const cuuint64_t dims[2] = {64, 64}, strides[1] = {64 * 2};
  const cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
  auto call = [&] {
    return encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  EXPECT_EQ(call(), CUDA_ERROR_NOT_INITIALIZED);
  ASSERT_EQ(init(0), CUDA_SUCCESS);
  EXPECT_EQ(call(), CUDA_SUCCESS);
}

// What a C caller can pass by mistake is an error code, never the end of its process (battery
// round 15, F2/F3): NULL names, images, buffers and out-pointers, a launch without the parameters
// the kernel takes, a device that is not there, an attribute CUDA does not define, a length <= 0.
TEST_F(DriverApi, NullArgumentsAndUnknownDevicesOrAttributesAreErrorsNotCrashes) {
  primary();
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
  auto get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(resolve("cuModuleGetFunction", 2000));
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(resolve("cuLaunchKernel", 4000));
  auto get = reinterpret_cast<PFN_cuDeviceGet_v2000>(resolve("cuDeviceGet", 2000));
  auto name = reinterpret_cast<PFN_cuDeviceGetName_v2000>(resolve("cuDeviceGetName", 2000));
  auto attribute = reinterpret_cast<PFN_cuDeviceGetAttribute_v2000>(resolve("cuDeviceGetAttribute", 2000));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto to_device = reinterpret_cast<PFN_cuMemcpyHtoD_v3020>(resolve("cuMemcpyHtoD", 3020));
  auto error_string = reinterpret_cast<PFN_cuGetErrorString_v6000>(resolve("cuGetErrorString", 6000));
  auto init = reinterpret_cast<PFN_cuInit_v2000>(resolve("cuInit", 2000));
  ASSERT_TRUE(load && get_function && launch && get && name && attribute && alloc && to_device && error_string && init);
  CUmodule mod = nullptr;
  EXPECT_EQ(load(&mod, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(load(nullptr, ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { ret; }\n"),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(load(&mod, ".version 8.0\n.target sm_90a\n.address_size 64\n"
                       ".visible .entry p(.param .u64 x, .param .u32 n) { ret; }\n"),
            CUDA_SUCCESS);
  CUfunction f = nullptr;
  EXPECT_EQ(get_function(&f, mod, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get_function(nullptr, mod, "p"), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(get_function(&f, mod, "p"), CUDA_SUCCESS);
  EXPECT_EQ(launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);  // no parameters
  CUdeviceptr x = 0;
  ASSERT_EQ(alloc(&x, 64), CUDA_SUCCESS);
  unsigned n = 4;
  void* params[] = {&x, &n};
  EXPECT_EQ(launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);  // the twin
  EXPECT_EQ(alloc(nullptr, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(to_device(x, nullptr, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  char buffer[48];
  std::memset(buffer, 0x55, sizeof buffer);
  EXPECT_EQ(name(buffer, -1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(name(buffer, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(buffer[0], 0x55);  // nothing written
  EXPECT_EQ(name(buffer, 8, 0), CUDA_SUCCESS);
  EXPECT_EQ(std::strlen(buffer), 7u);
  EXPECT_EQ(name(buffer, 8, 9), CUDA_ERROR_INVALID_DEVICE);
  int v = -7;
  EXPECT_EQ(attribute(&v, static_cast<CUdevice_attribute>(99999), 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(attribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 9), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(attribute(nullptr, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(attribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
  EXPECT_GT(v, 0);
  EXPECT_EQ(error_string(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(init(7), CUDA_ERROR_INVALID_VALUE);
  void* fn = nullptr;
  EXPECT_EQ(get_proc(nullptr, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get_proc("cuInit", nullptr, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr), CUDA_ERROR_INVALID_VALUE);
}

// Round 16, F2 and F3: the remaining NULL arguments are CUDA_ERROR_INVALID_VALUE, and every
// refusal records its own reason -- mgpuEmuLastError never gives an earlier failure's.
TEST_F(DriverApi, EveryRefusalSaysItsOwnReason) {
  primary();
  using LastError = CUresult (*)(const char**);
  auto last = reinterpret_cast<LastError>(resolve("mgpuEmuLastError", 2000));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto get = reinterpret_cast<PFN_cuDeviceGet_v2000>(resolve("cuDeviceGet", 2000));
  auto attr = reinterpret_cast<PFN_cuPointerGetAttribute_v4000>(resolve("cuPointerGetAttribute", 4000));
  auto managed = reinterpret_cast<PFN_cuMemAllocManaged_v6000>(resolve("cuMemAllocManaged", 6000));
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(resolve("cuTensorMapEncodeTiled", 12000));
  auto func_attr = reinterpret_cast<PFN_cuFuncGetAttribute_v2020>(resolve("cuFuncGetAttribute", 2020));
  ASSERT_TRUE(last && alloc && get && attr && managed && encode && func_attr);
  auto reason = [&] {
    const char* text = nullptr;
    EXPECT_EQ(last(&text), CUDA_SUCCESS);
    return std::string(text ? text : "");
  };
  CUdeviceptr p = 0;
  EXPECT_EQ(alloc(&p, std::size_t(1) << 50), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(reason().find("bytes asked"), std::string::npos);
  CUdevice d = 0;
  EXPECT_EQ(get(&d, 1), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(reason(), "cuDeviceGet: no device 1");
  ASSERT_EQ(alloc(&p, 4096), CUDA_SUCCESS);
  EXPECT_EQ(attr(nullptr, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(reason(), "cuPointerGetAttribute: data is NULL");
  EXPECT_EQ(managed(nullptr, 16, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(managed(&p, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(reason().find("cuMemAllocManaged: 0 bytes"), std::string::npos);
  int v = 0;
  EXPECT_EQ(func_attr(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, reinterpret_cast<CUfunction>(0x999)), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(reason(), "unknown function handle");
  alignas(64) CUtensorMap map;
  cuuint64_t dims[2] = {64, 64}, strides[1] = {128};
  cuuint32_t box[2] = {64, 64}, es[2] = {1, 1};
  auto call = [&](CUtensorMap* m, const cuuint64_t* g, const cuuint64_t* st, const cuuint32_t* b, const cuuint32_t* e) {
    return encode(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, reinterpret_cast<void*>(p), g, st, b, e, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  EXPECT_EQ(call(&map, dims, strides, box, es), CUDA_SUCCESS);  // the twin
  EXPECT_EQ(call(nullptr, dims, strides, box, es), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(reason(), "cuTensorMapEncodeTiled: tensorMap is NULL");
  EXPECT_EQ(call(&map, nullptr, strides, box, es), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(&map, dims, nullptr, box, es), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(reason(), "cuTensorMapEncodeTiled: globalStrides is NULL");
  EXPECT_EQ(call(&map, dims, strides, nullptr, es), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(&map, dims, strides, box, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(last(nullptr), CUDA_ERROR_INVALID_VALUE);
}

// A stream handle the caller never created, or has destroyed, is CUDA_ERROR_INVALID_HANDLE
// wherever one is taken; the null stream and the two special ones (CU_STREAM_LEGACY,
// CU_STREAM_PER_THREAD) always name a stream (round 15, F3). Event handles are not checked (see
// cuEventDestroy in the driver: LLVM's async lowering destroys a shared event twice).
TEST_F(DriverApi, StreamsAndEventsMustHaveBeenCreated) {
  primary();
  auto create = reinterpret_cast<PFN_cuStreamCreate_v2000>(resolve("cuStreamCreate", 2000));
  auto destroy = reinterpret_cast<PFN_cuStreamDestroy_v4000>(resolve("cuStreamDestroy", 4000));
  auto sync = reinterpret_cast<PFN_cuStreamSynchronize_v2000>(resolve("cuStreamSynchronize", 2000));
  auto memset_async = reinterpret_cast<PFN_cuMemsetD8Async_v3020>(resolve("cuMemsetD8Async", 3020));
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc", 3020));
  auto event_create = reinterpret_cast<PFN_cuEventCreate_v2000>(resolve("cuEventCreate", 2000));
  auto event_destroy = reinterpret_cast<PFN_cuEventDestroy_v4000>(resolve("cuEventDestroy", 4000));
  auto record = reinterpret_cast<PFN_cuEventRecord_v2000>(resolve("cuEventRecord", 2000));
  auto wait = reinterpret_cast<PFN_cuStreamWaitEvent_v3020>(resolve("cuStreamWaitEvent", 3020));
  ASSERT_TRUE(create && destroy && sync && memset_async && alloc && event_create && event_destroy && record && wait);
  CUstream s = nullptr;
  ASSERT_EQ(create(&s, 0), CUDA_SUCCESS);
  CUdeviceptr x = 0;
  ASSERT_EQ(alloc(&x, 64), CUDA_SUCCESS);
  const CUstream never = reinterpret_cast<CUstream>(0xdead0);
  EXPECT_EQ(sync(s), CUDA_SUCCESS);
  EXPECT_EQ(sync(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(sync(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  EXPECT_EQ(sync(never), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(memset_async(x, 1, 64, s), CUDA_SUCCESS);
  EXPECT_EQ(memset_async(x, 1, 64, never), CUDA_ERROR_INVALID_HANDLE);
  CUevent e = nullptr;
  ASSERT_EQ(event_create(&e, 0), CUDA_SUCCESS);
  EXPECT_EQ(record(e, s), CUDA_SUCCESS);
  EXPECT_EQ(wait(s, e, 0), CUDA_SUCCESS);
  EXPECT_EQ(record(e, never), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(event_destroy(e), CUDA_SUCCESS);
  EXPECT_EQ(destroy(s), CUDA_SUCCESS);
  EXPECT_EQ(sync(s), CUDA_ERROR_INVALID_HANDLE);  // destroyed
  EXPECT_EQ(destroy(s), CUDA_ERROR_INVALID_HANDLE);
}

// Host memory made visible to kernels (issue 31: LLVM's MLIR integration programs use
// gpu.host_register and gpu.alloc host_shared). CUDA Driver API, "Memory Management":
// cuMemHostRegister page-locks a host range and maps it for the device; with unified addressing
// its device pointer (cuMemHostGetDevicePointer) is its host pointer, and a kernel's accesses
// read and write the host's bytes. cuMemAllocManaged returns memory both sides address at one
// pointer. The kernel below doubles x[tid] and adds 1, for 64 threads.
struct HostMemory : DriverApi {
  PFN_cuModuleLoadData_v2000 load = nullptr;
  PFN_cuModuleGetFunction_v2000 get_function = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  PFN_cuMemHostRegister_v6050 host_register = nullptr;
  PFN_cuMemHostUnregister_v4000 host_unregister = nullptr;
  PFN_cuMemHostGetDevicePointer_v3020 device_pointer = nullptr;
  PFN_cuMemAllocManaged_v6000 alloc_managed = nullptr;
  PFN_cuMemFree_v3020 free_ = nullptr;
  PFN_cuPointerGetAttribute_v4000 attribute = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 release = nullptr;
  CUfunction f = nullptr;

  void SetUp() override {
    DriverApi::SetUp();
    load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
    get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(resolve("cuModuleGetFunction", 2000));
    launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(resolve("cuLaunchKernel", 4000));
    host_register = reinterpret_cast<PFN_cuMemHostRegister_v6050>(resolve("cuMemHostRegister", 6050));
    host_unregister = reinterpret_cast<PFN_cuMemHostUnregister_v4000>(resolve("cuMemHostUnregister", 4000));
    device_pointer = reinterpret_cast<PFN_cuMemHostGetDevicePointer_v3020>(resolve("cuMemHostGetDevicePointer", 3020));
    alloc_managed = reinterpret_cast<PFN_cuMemAllocManaged_v6000>(resolve("cuMemAllocManaged", 6000));
    free_ = reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree", 3020));
    attribute = reinterpret_cast<PFN_cuPointerGetAttribute_v4000>(resolve("cuPointerGetAttribute", 4000));
    release = reinterpret_cast<PFN_cuDevicePrimaryCtxRelease_v11000>(resolve("cuDevicePrimaryCtxRelease", 11000));
    ASSERT_TRUE(load && get_function && launch && host_register && host_unregister && device_pointer && alloc_managed &&
                free_ && attribute && release);
    primary();
    CUmodule mod = nullptr;
    ASSERT_EQ(load(&mod,
                   ".version 8.0\n.target sm_90a\n.address_size 64\n"
                   ".visible .entry twice(.param .u64 x) {\n"
                   "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
                   "  ld.param.u64 %rd1, [x];\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 4;\n"
                   "  add.s64 %rd3, %rd1, %rd2;\n  ld.global.u32 %r2, [%rd3];\n  mad.lo.u32 %r3, %r2, 2, 1;\n"
                   "  st.global.u32 [%rd3], %r3;\n  ret;\n}\n"),
              CUDA_SUCCESS);
    ASSERT_EQ(get_function(&f, mod, "twice"), CUDA_SUCCESS);
  }
  CUresult run(const void* x, unsigned threads = 64) {
    CUdeviceptr p = reinterpret_cast<CUdeviceptr>(x);
    void* args[] = {&p};
    return launch(f, 1, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr);
  }
  // A fault loses the context, as on a GPU; releasing the primary context (every reference the
  // tests of this process took) gives the next test a fresh one.
  void reset_context() {
    for (int i = 0; i < 1000; ++i) release(0);
  }
};

TEST_F(HostMemory, RegisteredHostMemoryIsReadAndWrittenByKernelsAtItsOwnAddress) {
  std::vector<std::uint32_t> x(64);
  for (std::uint32_t i = 0; i < 64; ++i) x[i] = i;
  ASSERT_EQ(host_register(x.data(), x.size() * 4, 0), CUDA_SUCCESS);
  CUdeviceptr d = 0;
  ASSERT_EQ(device_pointer(&d, x.data(), 0), CUDA_SUCCESS);
  EXPECT_EQ(d, reinterpret_cast<CUdeviceptr>(x.data()));  // unified addressing
  CUdeviceptr inner = 0;
  EXPECT_EQ(device_pointer(&inner, x.data() + 10, 0), CUDA_SUCCESS);  // any address inside the range
  EXPECT_EQ(inner, reinterpret_cast<CUdeviceptr>(x.data() + 10));
  unsigned type = 0;
  EXPECT_EQ(attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d), CUDA_SUCCESS);
  EXPECT_EQ(type, static_cast<unsigned>(CU_MEMORYTYPE_HOST));
  ASSERT_EQ(run(x.data()), CUDA_SUCCESS);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(x[i], 2 * i + 1) << i;  // no copy back: the host's own bytes
  x[5] = 100;                                                               // and the host's writes are seen
  ASSERT_EQ(run(x.data()), CUDA_SUCCESS);
  EXPECT_EQ(x[5], 201u);
  // Misuse the driver refuses: overlapping registrations, freeing or unregistering what is not
  // a registration, the device pointer of memory never registered.
  EXPECT_EQ(host_register(x.data() + 8, 16, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(free_(d), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(host_unregister(x.data() + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_EQ(host_unregister(x.data()), CUDA_SUCCESS);
  EXPECT_EQ(host_unregister(x.data()), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_EQ(device_pointer(&d, x.data(), 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(x.data())), CUDA_ERROR_INVALID_VALUE);
}

// The faulty twin: the same kernel on host memory that was never registered (or no longer is)
// is an illegal address, as on a GPU, and the host's bytes are untouched.
TEST_F(HostMemory, AKernelTouchingHostMemoryThatIsNotRegisteredIsAnIllegalAddress) {
  std::vector<std::uint32_t> x(64, 7);
  EXPECT_EQ(run(x.data()), CUDA_ERROR_ILLEGAL_ADDRESS);
  for (std::uint32_t v : x) EXPECT_EQ(v, 7u);
  // The context is lost: a later call gives the fault again and says why (round 19, F33: the
  // reason read was the call before's, here the refused unload's).
  using LastError = CUresult (*)(const char**);
  auto last = reinterpret_cast<LastError>(resolve("mgpuEmuLastError", 2000));
  auto unload = reinterpret_cast<PFN_cuModuleUnload_v2000>(resolve("cuModuleUnload", 2000));
  ASSERT_TRUE(last && unload);
  EXPECT_EQ(unload(reinterpret_cast<CUmodule>(x.data())), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(run(x.data()), CUDA_ERROR_ILLEGAL_ADDRESS);
  const char* why = nullptr;
  ASSERT_EQ(last(&why), CUDA_SUCCESS);
  EXPECT_NE(std::string(why).find("the context was lost to an earlier fault: twice: "), std::string::npos) << why;
  reset_context();
  // Registered, then unregistered: no longer visible.
  SetUp();
  ASSERT_EQ(host_register(x.data(), x.size() * 4, 0), CUDA_SUCCESS);
  ASSERT_EQ(host_unregister(x.data()), CUDA_SUCCESS);
  EXPECT_EQ(run(x.data()), CUDA_ERROR_ILLEGAL_ADDRESS);
  // Registered, but smaller than the kernel's reach: the bytes past the range are not the device's.
  reset_context();
  SetUp();
  ASSERT_EQ(host_register(x.data(), 32 * 4, 0), CUDA_SUCCESS);
  EXPECT_EQ(run(x.data()), CUDA_ERROR_ILLEGAL_ADDRESS);
  reset_context();
}

TEST_F(HostMemory, ManagedMemoryIsOneAllocationBothSidesAddress) {
  CUdeviceptr p = 0;
  ASSERT_EQ(alloc_managed(&p, 64 * 4, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  auto* x = reinterpret_cast<std::uint32_t*>(p);
  for (std::uint32_t i = 0; i < 64; ++i) x[i] = 3 * i;  // the host writes through the pointer itself
  ASSERT_EQ(run(x), CUDA_SUCCESS);
  for (std::uint32_t i = 0; i < 64; ++i) EXPECT_EQ(x[i], 6 * i + 1) << i;
  unsigned managed = 0, type = 0;
  EXPECT_EQ(attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p), CUDA_SUCCESS);
  EXPECT_EQ(managed, 1u);
  EXPECT_EQ(attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_SUCCESS);
  EXPECT_EQ(type, static_cast<unsigned>(CU_MEMORYTYPE_DEVICE));
  CUdeviceptr d = 0;
  EXPECT_EQ(device_pointer(&d, x, 0), CUDA_SUCCESS);
  EXPECT_EQ(d, p);
  EXPECT_EQ(host_unregister(x), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);  // managed, not registered
  EXPECT_EQ(free_(p), CUDA_SUCCESS);
  EXPECT_EQ(free_(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(alloc_managed(&p, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
}

// The faulty twin (LLVM's alloc-host-shared.mlir has this bug): a managed allocation holds the
// bytes asked for, not the page a GPU hands out, so an access one element past it is caught.
TEST_F(HostMemory, AKernelReachingPastAManagedAllocationIsAnIllegalAddress) {
  CUdeviceptr p = 0;
  ASSERT_EQ(alloc_managed(&p, 32 * 4, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  std::memset(reinterpret_cast<void*>(p), 0, 32 * 4);
  EXPECT_EQ(run(reinterpret_cast<void*>(p), 33), CUDA_ERROR_ILLEGAL_ADDRESS);
  reset_context();
}

// A failed device-side assert (a call of __assertfail, as LLVM's NVPTX back end emits it for
// cf.assert and CUDA's assert()) stops the kernel, prints CUDA's assertion line for each thread
// that failed it, is a finding naming the message, file and line, and the launch answers
// CUDA_ERROR_ASSERT (CUDA Runtime API: cudaErrorAssert). The twin passes its assertion.
TEST_F(HostMemory, AFailedDeviceAssertIsAFindingWithItsMessageAndCudaErrorAssert) {
  const char* ptx =
      ".version 8.0\n.target sm_90a\n.address_size 64\n"
      ".extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, .param .b64 c);\n"
      ".global .align 1 .b8 msg[6] = {120, 32, 62, 32, 48, 0};\n"       // "x > 0"
      ".global .align 1 .b8 file[10] = {107, 101, 114, 110, 101, 108, 46, 99, 117, 0};\n"  // "kernel.cu"
      ".global .align 1 .b8 func[6] = {99, 104, 101, 99, 107, 0};\n"    // "check"
      ".visible .entry check(.param .u32 x) {\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<2>;\n  .reg .b64 %rd<4>;\n"
      "  ld.param.u32 %r1, [x];\n  setp.gt.s32 %p1, %r1, 0;\n  @%p1 bra DONE;\n"
      "  { .param .b64 param0; .param .b64 param1; .param .b32 param2; .param .b64 param3; .param .b64 param4;\n"
      "    mov.b64 %rd1, msg; cvta.global.u64 %rd1, %rd1; st.param.b64 [param0], %rd1;\n"
      "    mov.b64 %rd2, file; cvta.global.u64 %rd2, %rd2; st.param.b64 [param1], %rd2;\n"
      "    st.param.b32 [param2], 42;\n"
      "    mov.b64 %rd3, func; cvta.global.u64 %rd3, %rd3; st.param.b64 [param3], %rd3;\n"
      "    st.param.b64 [param4], 1;\n"
      "    call.uni __assertfail, (param0, param1, param2, param3, param4);\n  }\n"
      "DONE:\n  ret;\n}\n";
  CUmodule mod = nullptr;
  ASSERT_EQ(load(&mod, ptx), CUDA_SUCCESS);
  CUfunction check = nullptr;
  ASSERT_EQ(get_function(&check, mod, "check"), CUDA_SUCCESS);
  using LastLaunch = CUresult (*)(const char**);
  auto last_launch = reinterpret_cast<LastLaunch>(resolve("mgpuEmuLastLaunch", 12000));
  ASSERT_NE(last_launch, nullptr);
  const char* json = nullptr;

  int x = 1;  // the twin: the assertion holds
  void* args[] = {&x};
  ASSERT_EQ(launch(check, 1, 1, 1, 2, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(last_launch(&json), CUDA_SUCCESS);
  EXPECT_NE(std::string(json).find("\"reports\":[]"), std::string::npos) << json;

  x = 0;  // fails in both threads of the block
  EXPECT_EQ(launch(check, 1, 1, 1, 2, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_ASSERT);
  ASSERT_EQ(last_launch(&json), CUDA_SUCCESS);
  const std::string j = json;
  EXPECT_NE(j.find("\"kind\":\"trap\""), std::string::npos) << j;
  EXPECT_NE(j.find("device assertion failed: `x > 0` at kernel.cu:42 in check (2 threads of this warp"), std::string::npos) << j;
  EXPECT_NE(j.find("kernel.cu:42: check: block: [0,0,0], thread: [0,0,0] Assertion `x > 0` failed.\\n"
                   "kernel.cu:42: check: block: [0,0,0], thread: [1,0,0] Assertion `x > 0` failed."),
            std::string::npos)
      << j;
  const char* name = nullptr;
  auto error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(resolve("cuGetErrorName", 6000));
  ASSERT_EQ(error_name(CUDA_ERROR_ASSERT, &name), CUDA_SUCCESS);
  EXPECT_STREQ(name, "CUDA_ERROR_ASSERT");
  reset_context();
}

// Round 4 (G05, G12): an MGPU_EMU_ARCH the device does not present fails cuInit, and
// mgpuEmuLastError names the variable, its value and what it takes (mgpu-tune reports that,
// exit 2); PTX nested past the parser's limit fails to load with the reason, no crash (M_ptx_nest).
TEST_F(DriverApi, ARefusedArchAndDeepPtxSayWhy) {
  auto init = reinterpret_cast<PFN_cuInit_v2000>(resolve("cuInit", 2000));
  auto last_error = reinterpret_cast<CUresult (*)(const char**)>(resolve("mgpuEmuLastError", 13000));
  ASSERT_NE(last_error, nullptr);
  const char* why = nullptr;
  setenv("MGPU_EMU_ARCH", "sm100a", 1);
  EXPECT_EQ(init(0), CUDA_ERROR_INVALID_VALUE);
  unsetenv("MGPU_EMU_ARCH");
  ASSERT_EQ(last_error(&why), CUDA_SUCCESS);
  EXPECT_STREQ(why, "MGPU_EMU_ARCH='sm100a': must be sm_90a, sm_90, sm_100a or sm_100 (the arch the virtual device presents)");
  ASSERT_EQ(init(0), CUDA_SUCCESS);
  primary();
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
  const std::string deep = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry f()\n{\n" +
                           std::string(100000, '{') + std::string(100000, '}') + "\nret;\n}\n";
  CUmodule mod = nullptr;
  EXPECT_EQ(load(&mod, deep.c_str()), CUDA_ERROR_INVALID_PTX);
  ASSERT_EQ(last_error(&why), CUDA_SUCCESS);
  EXPECT_NE(std::string(why).find("PTX line 6: { } blocks nested deeper than 256 levels in kernel f"), std::string::npos) << why;
}

// Round 7 (F13): a module for a target or PTX ISA the virtual device does not implement is
// refused at load, as a driver refuses one for another GPU (it ran as sm_90a and was called
// clean); the twin for sm_90a at PTX ISA 8.0 loads.
TEST_F(DriverApi, AModuleForAnotherTargetOrANewerPtxIsaIsRefused) {
  auto init = reinterpret_cast<PFN_cuInit_v2000>(resolve("cuInit", 2000));
  auto last_error = reinterpret_cast<CUresult (*)(const char**)>(resolve("mgpuEmuLastError", 13000));
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(resolve("cuModuleLoadData", 2000));
  auto unload = reinterpret_cast<PFN_cuModuleUnload_v2000>(resolve("cuModuleUnload", 2000));
  ASSERT_EQ(init(0), CUDA_SUCCESS);
  primary();
  auto module = [](const char* version, const char* target) {
    return std::string(".version ") + version + "\n.target " + target + "\n.address_size 64\n.visible .entry f()\n{\nret;\n}\n";
  };
  const char* why = nullptr;
  CUmodule mod = nullptr;
  EXPECT_EQ(load(&mod, module("8.0", "sm_120a").c_str()), CUDA_ERROR_NO_BINARY_FOR_GPU);
  ASSERT_EQ(last_error(&why), CUDA_SUCCESS);
  EXPECT_NE(std::string(why).find(".target sm_120a is not a target the virtual device implements"), std::string::npos) << why;
  EXPECT_EQ(load(&mod, module("99.9", "sm_90a").c_str()), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  ASSERT_EQ(last_error(&why), CUDA_SUCCESS);
  EXPECT_NE(std::string(why).find(".version 99.9 is newer than the virtual device implements"), std::string::npos) << why;
  EXPECT_EQ(load(&mod, module("7.0", "sm_90a").c_str()), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  ASSERT_EQ(load(&mod, module("8.0", "sm_90a").c_str()), CUDA_SUCCESS);
  EXPECT_EQ(unload(mod), CUDA_SUCCESS);
}

}  // namespace
