// The CUDA driver API of the virtual device (libmgpu_vcuda.so): the entry points mgpu-tune,
// its tests and the mgpu* runtime wrappers use, with the real ABI names (cuda.h's _v2 macros
// apply), plus cuGetProcAddress for callers that resolve them. Kernels run synchronously at
// launch; streams and events exist for ordering only -- the device has no clock, so
// cuEventElapsedTime answers CUDA_ERROR_NOT_SUPPORTED and nothing run here is ever a time.
// Addressing is unified, as on a GPU: host memory registered with cuMemHostRegister and managed
// allocations (cuMemAllocManaged) are device-addressable at their host address, so kernels read
// and write the host's bytes themselves (launches run to completion before they return, so the
// host sees every write once the launch call has returned -- no copies at launch boundaries).
// Extensions (through cuGetProcAddress): mgpuEmuLastLaunch (JSON of the last launch: ok,
// reports, printf output), mgpuEmuLastError. Environment: MGPU_EMU_SEED (scheduler seed,
// default 1), MGPU_EMU_REPORTS=stderr|off (where findings are printed; default stderr),
// MGPU_EMU_RACES=1 (shared-memory race detection, check/race_detector.h), MGPU_EMU_STEP_LIMIT
// (warp-instructions a launch may run before it is a step-limit finding; exec/state.h).
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/emu/driver/driver_state.h"
#include "core/emu/environment.h"
#include "core/emu/engines/tensor_map.h"
#include "core/emu/insns/assert_fail.h"
#include "core/emu/ptx/directives.h"
#include "core/emu/ptx/parser.h"

using mgpu::emu::DriverState;

namespace {

constexpr int kDevices = 1;

// What the device presents itself as: sm_90a (an H100: compute capability 9.0, 132 SMs) or
// sm_100a (a B200: 10.0, 148 SMs). MGPU_EMU_ARCH=sm_90a|sm_100a chooses; without it the device
// is sm_90a until a module whose .target is sm_100a/sm_100 is loaded, and sm_100a from then on.
bool is_sm100_target(const std::string& t) { return t == "sm_100a" || t == "sm_100"; }
const char* forced_arch() {
  const char* s = std::getenv("MGPU_EMU_ARCH");
  return s && *s ? s : nullptr;
}
bool presents_sm100(const DriverState& S) {
  if (const char* a = forced_arch()) return is_sm100_target(a);
  return S.loaded_sm100;
}

#define EMU_LOCK                                   \
  DriverState& S = DriverState::get();             \
  std::lock_guard<std::mutex> lock_(S.mu);         \
  if (!S.initialized) return S.fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called")

// A lost context refuses every call with the fault that lost it, and says so again (round 19,
// F33: the reason read was the previous call's, whatever it was).
#define EMU_STICKY \
  if (S.sticky != CUDA_SUCCESS) return S.fail(S.sticky, "the context was lost to an earlier fault: " + S.sticky_reason)
#define EMU_LOCK_STICKY \
  EMU_LOCK;             \
  EMU_STICKY

// A C caller's NULL (an out-pointer, a name, an image, a host buffer) is CUDA_ERROR_INVALID_VALUE
// naming the argument, as the driver answers, never a dereference that ends the caller's process
// (battery round 15, F2). After EMU_LOCK.
#define EMU_NOT_NULL(arg, call) \
  if (!(arg)) return S.fail(CUDA_ERROR_INVALID_VALUE, call ": " #arg " is NULL")
// A refusal by a call that holds no lock (it touches no device state): its reason is recorded
// all the same, so mgpuEmuLastError never gives an earlier, unrelated failure's (round 16, F3).
CUresult fail_unlocked(CUresult code, std::string why) {
  DriverState& S = DriverState::get();
  std::lock_guard<std::mutex> lock(S.mu);
  return S.fail(code, std::move(why));
}
// The one device there is: another ordinal is CUDA_ERROR_INVALID_DEVICE (round 15, F3).
#define EMU_DEVICE(d, call) \
  if ((d) < 0 || (d) >= kDevices) return S.fail(CUDA_ERROR_INVALID_DEVICE, call ": no device " + std::to_string(d))
CUresult launch(DriverState& S, CUfunction f, const std::uint32_t grid[3], const std::uint32_t block[3], const std::uint32_t cluster[3],
                unsigned smem, void** params) {
  auto it = S.functions.find(f);
  if (it == S.functions.end()) return S.fail(CUDA_ERROR_INVALID_HANDLE, "unknown function handle");
  mgpu::emu::EmuFunction& fn = *it->second;
  if (!params) {
    const mgpu::emu::ptx::Kernel* k = fn.module->ptx.find(fn.name);
    if (k && !k->params.empty())
      return S.fail(CUDA_ERROR_INVALID_VALUE, "kernel " + fn.name + " takes " + std::to_string(k->params.size()) +
                                                  " parameters and kernelParams is NULL");
  }
  if (static_cast<int>(smem) > std::max(fn.max_dynamic_smem, 48 * 1024))
    return S.fail(CUDA_ERROR_INVALID_VALUE, "dynamic shared memory " + std::to_string(smem) + " above the function's limit " +
                                                std::to_string(fn.max_dynamic_smem) + " (cuFuncSetAttribute)");
  mgpu::emu::LaunchConfig c;
  for (int i = 0; i < 3; ++i) {
    c.grid[i] = grid[i];
    c.block[i] = block[i];
    c.cluster[i] = cluster[i];
  }
  c.dynamic_smem = smem;
  c.sms = presents_sm100(S) ? 148 : 132;  // the SMs the device reports (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
  if (std::string why = mgpu::emu::launch_shape_error(c); !why.empty()) return S.fail(CUDA_ERROR_INVALID_VALUE, why);
  bool print_reports = true;
  try {  // a knob set to what it does not take fails the launch, never falls back to its default
    c.seed = mgpu::emu::seed_from_environment();
    c.step_limit = mgpu::emu::step_limit_from_environment();
    c.detect_races = mgpu::emu::races_from_environment();
    print_reports = mgpu::emu::print_reports_from_environment();
  } catch (const std::invalid_argument& e) {
    return S.fail(CUDA_ERROR_INVALID_VALUE, e.what());
  }
  mgpu::emu::LaunchResult r = S.device->launch(*fn.module, fn.name, c, params);
  S.last_launch_json = mgpu::emu::launch_json(r);
  if (!r.printf_output.empty()) {
    std::fwrite(r.printf_output.data(), 1, r.printf_output.size(), stdout);
    std::fflush(stdout);
  }
  if (print_reports)
    for (const auto& rep : r.reports) std::fprintf(stderr, "mgpu-emu: %s: %s\n", fn.name.c_str(), rep.format().c_str());
  if (!r.ok) {
    const auto& first = r.reports.front();
    // A launch that the configuration makes impossible is an invalid value; a kernel that
    // faults, hangs or hits an unsupported instruction loses the context, as on a GPU.
    if (first.where.line < 0 && first.kind == mgpu::emu::ReportKind::Unsupported)
      return S.fail(CUDA_ERROR_INVALID_VALUE, first.message);
    S.sticky = mgpu::emu::fault_code(first.kind);
    // A failed device assert (__assertfail) is CUDA_ERROR_ASSERT, as the driver reports it.
    if (first.kind == mgpu::emu::ReportKind::Trap && first.message.rfind(mgpu::emu::kAssertFailPrefix, 0) == 0)
      S.sticky = CUDA_ERROR_ASSERT;
    S.sticky_reason = fn.name + ": " + first.format();
    return S.fail(S.sticky, first.format());
  }
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) {
  DriverState& S = DriverState::get();
  std::lock_guard<std::mutex> lock(S.mu);
  if (flags != 0) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuInit: flags must be 0");
  if (const char* a = forced_arch(); a && !is_sm100_target(a) && std::strcmp(a, "sm_90a") != 0 && std::strcmp(a, "sm_90") != 0)
    return S.fail(CUDA_ERROR_INVALID_VALUE, "MGPU_EMU_ARCH='" + std::string(a).substr(0, 40) + (std::strlen(a) > 40 ? "...'" : "'") +
                                                ": must be sm_90a, sm_90, sm_100a or sm_100 (the arch the virtual device presents)");
  S.initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* v) {
  if (!v) return fail_unlocked(CUDA_ERROR_INVALID_VALUE, "cuDriverGetVersion: v is NULL");
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult e, const char** s) {
  // Never destroyed (as every table here): another thread may ask while the program exits
  // (round 19: an async runtime's worker was told "no error 400" as exit ran the destructors).
  static const auto& names = *new std::unordered_map<int, const char*>{
#define X(name) {name, #name},
#include "core/emu/driver/cuda_error_names.inc"
#undef X
  };
  if (!s) return fail_unlocked(CUDA_ERROR_INVALID_VALUE, "cuGetErrorName: s is NULL");
  auto it = names.find(e);
  *s = it == names.end() ? nullptr : it->second;
  return it == names.end() ? fail_unlocked(CUDA_ERROR_INVALID_VALUE, "cuGetErrorName: no error " + std::to_string(int(e)))
                           : CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult e, const char** s) {
  if (!s) return fail_unlocked(CUDA_ERROR_INVALID_VALUE, "cuGetErrorString: s is NULL");
  switch (e) {
    case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported on the virtual device (see mgpuEmuLastError)"; break;
    case CUDA_ERROR_LAUNCH_TIMEOUT: *s = "the kernel deadlocked or did not finish on the virtual device"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
    case CUDA_ERROR_ASSERT: *s = "device-side assert triggered"; break;
    default:
      // Its own reason when `e` is no error (round 17, F11), not cuGetErrorName's.
      if (cuGetErrorName(e, s) != CUDA_SUCCESS)
        return fail_unlocked(CUDA_ERROR_INVALID_VALUE, "cuGetErrorString: no error " + std::to_string(int(e)));
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* n) {
  EMU_LOCK;
  EMU_NOT_NULL(n, "cuDeviceGetCount");
  *n = kDevices;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  EMU_LOCK;
  EMU_NOT_NULL(d, "cuDeviceGet");
  EMU_DEVICE(ordinal, "cuDeviceGet");
  *d = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  EMU_LOCK;
  EMU_NOT_NULL(name, "cuDeviceGetName");
  if (len <= 0) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetName: len must be positive");
  EMU_DEVICE(d, "cuDeviceGetName");
  std::snprintf(name, static_cast<std::size_t>(len), "%s",
                presents_sm100(S) ? "mgpu-tune virtual sm_100a (emulated)" : "mgpu-tune virtual sm_90a (emulated)");
  return CUDA_SUCCESS;
}

// What cuDeviceTotalMem reports and cuMemAlloc holds to (mgpu::emu::kDeviceMemory): the virtual
// device's memory is this process's, so a request past it is CUDA's out-of-memory, not an
// allocation that kills us.
using mgpu::emu::kDeviceMemory;

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice d) {
  EMU_LOCK;
  EMU_NOT_NULL(bytes, "cuDeviceTotalMem");
  EMU_DEVICE(d, "cuDeviceTotalMem");
  *bytes = kDeviceMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  EMU_LOCK;
  EMU_NOT_NULL(v, "cuDeviceGetAttribute");
  EMU_DEVICE(d, "cuDeviceGetAttribute");
  // An attribute CUDA does not define is CUDA_ERROR_INVALID_VALUE (round 15, F3); one it defines
  // that this device does not model reads 0, as a feature it lacks.
  if (static_cast<int>(a) <= 0 || static_cast<int>(a) >= static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX))
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute: no attribute " + std::to_string(static_cast<int>(a)));
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = presents_sm100(S) ? 10 : 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = presents_sm100(S) ? 148 : 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 * 1024 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 227 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 228 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 0; break;  // no clock
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}

// Contexts (CUDA Driver API, "Primary Context Management", "Context Management"): the one device
// has one context, its primary one, live from the first retain to the last release; its handle
// stays the same across creations, its id (cuCtxGetId) does not. A handle that is no live
// context is CUDA_ERROR_INVALID_CONTEXT and changes nothing (round 17, F10): before, cuCtxDestroy
// of any handle released device 0's context, its memory with it.
//
// Each host thread has its own stack of current contexts, the top its current one ("Context
// Management": cuCtxPushCurrent, cuCtxPopCurrent, cuCtxSetCurrent replaces the top, NULL pops
// it). A retain binds nothing; cuCtxCreate makes the context current, cuCtxDestroy pops it if it
// is the caller's. Calls that act in the current context with no handle to name another (a load,
// an allocation, a copy, a stream or event made, the NULL stream) need one: none bound is
// CUDA_ERROR_INVALID_CONTEXT; a binding left to a context released to nothing is
// CUDA_ERROR_CONTEXT_IS_DESTROYED (cuda.h: "the context current to the calling thread has been
// destroyed ... or is a primary context which has not yet been initialized") -- round 18, F20:
// every call succeeded on any thread with the context retained anywhere.
static thread_local std::vector<CUcontext> t_context_stack;
static CUcontext thread_current() { return t_context_stack.empty() ? nullptr : t_context_stack.back(); }
static CUcontext the_context(const DriverState& S) { return reinterpret_cast<CUcontext>(const_cast<DriverState*>(&S)); }

static bool live_context(const DriverState& S, CUcontext ctx) { return S.primary_refs > 0 && ctx == the_context(S); }
#define EMU_LIVE_CONTEXT(ctx, call) \
  if (!live_context(S, ctx)) return S.fail(CUDA_ERROR_INVALID_CONTEXT, call ": the handle is no live context")

static CUresult need_current(DriverState& S, const char* call) {
  if (!thread_current())
    return S.fail(CUDA_ERROR_INVALID_CONTEXT,
                  std::string(call) + ": no context is current on this thread (cuCtxSetCurrent or cuCtxPushCurrent binds one)");
  if (S.primary_refs == 0)
    return S.fail(CUDA_ERROR_CONTEXT_IS_DESTROYED,
                  std::string(call) + ": the context current on this thread was released to nothing (retain it again)");
  return CUDA_SUCCESS;
}
// After EMU_LOCK: the calling thread's current context, then the sticky fault of a lost one.
#define EMU_CURRENT(call) \
  if (CUresult r_ = need_current(S, call); r_ != CUDA_SUCCESS) return r_
#define EMU_CURRENT_STICKY(call) \
  EMU_LOCK;                      \
  EMU_CURRENT(call);             \
  EMU_STICKY
// A stream handle names its context; the NULL stream (and CU_STREAM_LEGACY, CU_STREAM_PER_THREAD)
// is the current context's, so needs one. A stream never created, destroyed, or of a context
// released since is CUDA_ERROR_INVALID_HANDLE (round 15, F3).
static bool is_null_stream(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }
static CUresult stream_ok(DriverState& S, CUstream s, const char* call) {
  if (is_null_stream(s)) return need_current(S, call);
  if (!S.streams.count(reinterpret_cast<std::uint64_t>(s)))
    return S.fail(CUDA_ERROR_INVALID_HANDLE, std::string(call) + ": unknown stream handle");
  return CUDA_SUCCESS;
}
#define EMU_STREAM(s, call) \
  if (CUresult r_ = stream_ok(S, s, call); r_ != CUDA_SUCCESS) return r_

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  EMU_LOCK;
  EMU_NOT_NULL(ctx, "cuDevicePrimaryCtxRetain");
  EMU_DEVICE(d, "cuDevicePrimaryCtxRetain");
  if (S.primary_refs++ == 0) ++S.context_id;
  *ctx = the_context(S);
  return CUDA_SUCCESS;
}

static CUresult release_primary(DriverState& S) {
  if (--S.primary_refs == 0) {
    // The primary context goes away: its memory, modules, streams and any sticky fault with it.
    // Threads keep their bindings to its handle (CUDA_ERROR_CONTEXT_IS_DESTROYED until retained).
    S.functions.clear();
    S.streams.clear();
    S.events.clear();
    S.device = std::make_unique<mgpu::emu::Device>();
    S.sticky = CUDA_SUCCESS;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  EMU_LOCK;
  EMU_DEVICE(d, "cuDevicePrimaryCtxRelease");
  if (S.primary_refs == 0) return S.fail(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease: the primary context is not retained");
  return release_primary(S);
}

// cuCtxCreate makes a new context, distinct from the primary one and from every other, with
// resources of its own ("Context Management"). The virtual device has one context, its primary:
// it refuses rather than hand the primary out as a new one (battery round 19, F31: two "created"
// contexts were one, and destroying one took the other's allocations), and reads no argument, so
// a caller of any of cuCtxCreate's ABIs is refused alike.
CUresult CUDAAPI cuCtxCreate(CUcontext*, CUctxCreateParams*, unsigned int, CUdevice) {
  EMU_LOCK;
  return S.fail(CUDA_ERROR_NOT_SUPPORTED, "cuCtxCreate: the virtual device has one context, its primary one: retain it "
                                          "(cuDevicePrimaryCtxRetain) and make it current (cuCtxSetCurrent)");
}
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) {
  EMU_LOCK;
  EMU_NOT_NULL(ctx, "cuCtxDestroy");
  EMU_LIVE_CONTEXT(ctx, "cuCtxDestroy");
  if (thread_current() == ctx) t_context_stack.pop_back();  // "as though cuCtxPopCurrent() were called"
  return release_primary(S);
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  EMU_LOCK;
  if (!ctx) {  // NULL unbinds: pops the top, if any
    if (!t_context_stack.empty()) t_context_stack.pop_back();
    return CUDA_SUCCESS;
  }
  EMU_LIVE_CONTEXT(ctx, "cuCtxSetCurrent");
  if (t_context_stack.empty())
    t_context_stack.push_back(ctx);
  else
    t_context_stack.back() = ctx;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  EMU_LOCK;
  EMU_NOT_NULL(ctx, "cuCtxGetCurrent");
  *ctx = thread_current();
  return CUDA_SUCCESS;
}
// cuCtxGetId (CUDA 12.0, "Context Management"): an id unique to this creation of the context in
// the process -- what tells a caller caching per context that the context was made again.
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long* id) {
  EMU_LOCK;
  EMU_NOT_NULL(id, "cuCtxGetId");
  if (ctx) {
    EMU_LIVE_CONTEXT(ctx, "cuCtxGetId");
  } else {
    EMU_CURRENT("cuCtxGetId");
  }
  *id = S.context_id;
  return CUDA_SUCCESS;
}
// cuCtxGetDevice (CUDA Driver API, "Context Management"): the current context's device, the one
// device there is. CUDA 13.0's ABI (cuCtxGetDevice_v2) names the context, NULL meaning the
// current one, and refuses a handle that is no live context, as cuCtxSynchronize_v2 does.
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  EMU_LOCK;
  EMU_NOT_NULL(device, "cuCtxGetDevice");
  EMU_CURRENT("cuCtxGetDevice");
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  EMU_LOCK;
  EMU_NOT_NULL(device, "cuCtxGetDevice");
  if (ctx) {
    EMU_LIVE_CONTEXT(ctx, "cuCtxGetDevice");
  } else {
    EMU_CURRENT("cuCtxGetDevice");
  }
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  EMU_LOCK;
  EMU_LIVE_CONTEXT(ctx, "cuCtxPushCurrent");
  t_context_stack.push_back(ctx);
  return CUDA_SUCCESS;
}
// Pops the calling thread's current context; with none, CUDA_ERROR_INVALID_CONTEXT.
CUresult CUDAAPI cuCtxPopCurrent(CUcontext* ctx) {
  EMU_LOCK;
  if (t_context_stack.empty()) return S.fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPopCurrent: no context is current on this thread");
  if (ctx) *ctx = t_context_stack.back();
  t_context_stack.pop_back();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize() { EMU_CURRENT_STICKY("cuCtxSynchronize"); return CUDA_SUCCESS; }
// CUDA 13.0's ABI (cuda.h, cuCtxSynchronize_v2): the context is named; NULL means the current
// one. A handle that is no live context is refused, as the driver does, so a caller that
// resolves the new ABI but calls the old prototype fails here too, not only on a GPU.
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  EMU_LOCK;
  if (ctx) {
    EMU_LIVE_CONTEXT(ctx, "cuCtxSynchronize");
  } else {
    EMU_CURRENT("cuCtxSynchronize");
  }
  EMU_STICKY;
  return CUDA_SUCCESS;
}

// Modules: PTX text only (the virtual device runs PTX, not SASS).
CUresult CUDAAPI cuModuleLoadData(CUmodule* mod, const void* image) {
  EMU_CURRENT_STICKY("cuModuleLoadData");
  EMU_NOT_NULL(mod, "cuModuleLoadData");
  EMU_NOT_NULL(image, "cuModuleLoadData");
  const char* text = static_cast<const char*>(image);
  if (std::memcmp(text, "\x7f" "ELF", 4) == 0)
    return S.fail(CUDA_ERROR_INVALID_IMAGE, "the virtual device runs PTX, not cubins: load the PTX text instead");
  try {
    mgpu::emu::LoadedModule& m = S.device->load(text);
    // A module for a target or PTX ISA the device does not implement is refused, as a driver
    // refuses one for another GPU (it ran as sm_90a: core/emu/ptx/directives.h).
    if (std::optional<mgpu::emu::ptx::DirectiveProblem> p = mgpu::emu::ptx::check_directives(m.ptx)) {
      S.device->unload(&m);
      return S.fail(p->version ? CUDA_ERROR_UNSUPPORTED_PTX_VERSION : CUDA_ERROR_NO_BINARY_FOR_GPU, p->message);
    }
    const bool sm100 = is_sm100_target(m.ptx.target);
    if (const char* a = forced_arch(); a && sm100 != is_sm100_target(a)) {
      const std::string target = m.ptx.target;
      S.device->unload(&m);
      return S.fail(CUDA_ERROR_NO_BINARY_FOR_GPU, "the module targets " + target + "; the virtual device presents " + a + " (MGPU_EMU_ARCH)");
    }
    S.loaded_sm100 |= sm100;
    *mod = reinterpret_cast<CUmodule>(&m);
  } catch (const mgpu::emu::ptx::ParseError& e) {
    return S.fail(CUDA_ERROR_INVALID_PTX, e.what());
  } catch (const mgpu::emu::Fault& f) {
    return S.fail(CUDA_ERROR_INVALID_PTX, f.report.format());
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* mod, const void* image, unsigned int, CUjit_option*, void**) { return cuModuleLoadData(mod, image); }

// Frees the module, its global variables and the function handles taken from it (a verifying
// worker loads a module per config: kept for the context's life they grew it by ~200 KB each).
CUresult CUDAAPI cuModuleUnload(CUmodule mod) {
  EMU_LOCK;
  auto* m = reinterpret_cast<const mgpu::emu::LoadedModule*>(mod);
  if (!S.device->holds(m)) return S.fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload: not a loaded module");
  for (auto it = S.functions.begin(); it != S.functions.end();)
    it = it->second->module == m ? S.functions.erase(it) : std::next(it);
  S.device->unload(m);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule mod, const char* name) {
  EMU_LOCK_STICKY;
  EMU_NOT_NULL(f, "cuModuleGetFunction");
  EMU_NOT_NULL(name, "cuModuleGetFunction");
  auto* m = reinterpret_cast<const mgpu::emu::LoadedModule*>(mod);
  if (!S.device->holds(m)) return S.fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction: not a loaded module");
  if (!m->ptx.find(name)) return S.fail(CUDA_ERROR_NOT_FOUND, std::string("no kernel named '") + name + "' in the module");
  auto fn = std::make_unique<mgpu::emu::EmuFunction>();
  fn->module = m;
  fn->name = name;
  *f = reinterpret_cast<CUfunction>(S.next_handle++);
  S.functions[*f] = std::move(fn);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule mod, const char* name) {
  EMU_LOCK_STICKY;
  EMU_NOT_NULL(name, "cuModuleGetGlobal");
  auto* m = reinterpret_cast<const mgpu::emu::LoadedModule*>(mod);
  if (!S.device->holds(m)) return S.fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetGlobal: not a loaded module");
  for (std::size_t i = 0; i < m->ptx.variables.size(); ++i)
    if (m->ptx.variables[i].name == name && m->global_vars[i]) {
      if (dptr) *dptr = m->global_vars[i];
      if (bytes) *bytes = m->ptx.variables[i].size;
      return CUDA_SUCCESS;
    }
  return S.fail(CUDA_ERROR_NOT_FOUND, std::string("cuModuleGetGlobal: the module has no global ") + name);
}

// cuFuncSetAttribute (CUDA Driver API, "Execution Control"): the attributes the driver lets a
// caller set; the others are read-only and an id outside CUfunction_attribute is no attribute,
// both CUDA_ERROR_INVALID_VALUE (round 18, F20: every id was taken and dropped).
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  EMU_LOCK_STICKY;
  auto it = S.functions.find(f);
  if (it == S.functions.end()) return S.fail(CUDA_ERROR_INVALID_HANDLE, "unknown function handle");
  mgpu::emu::EmuFunction& fn = *it->second;
  auto bad_value = [&](const char* what) {
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute: " + std::to_string(v) + " is no " + what);
  };
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (v < 0 || v > 227 * 1024) return S.fail(CUDA_ERROR_INVALID_VALUE, "dynamic shared memory above 227 KiB");
      fn.max_dynamic_smem = v;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:  // a hint: percent, or -1 for no preference
      return v < -1 || v > 100 ? bad_value("carveout percentage (-1..100)") : CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      if (v < 0) return bad_value("cluster extent");
      fn.required_cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = static_cast<unsigned>(v);
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      if (v != 0 && v != 1) return bad_value("flag (0 or 1)");
      fn.non_portable_cluster = v == 1;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      return v < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT || v > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING
                 ? bad_value("CUclusterSchedulingPolicy")
                 : CUDA_SUCCESS;
    default:
      if (a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
        return S.fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute: no attribute " + std::to_string(int(a)));
      return S.fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute: attribute " + std::to_string(int(a)) + " is read-only");
  }
}

CUresult CUDAAPI cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction f) {
  EMU_LOCK;
  EMU_NOT_NULL(v, "cuFuncGetAttribute");
  auto it = S.functions.find(f);
  if (it == S.functions.end()) return S.fail(CUDA_ERROR_INVALID_HANDLE, "unknown function handle");
  if (a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute: no attribute " + std::to_string(int(a)));
  const mgpu::emu::EmuFunction& fn = *it->second;
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = fn.max_dynamic_smem; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = static_cast<int>(mgpu::emu::Device::static_shared_bytes(*fn.module)); break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *v = fn.non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      *v = static_cast<int>(fn.required_cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH]);
      break;
    default: *v = 0;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                CUstream s, void** params, void** extra) {
  EMU_LOCK;
  EMU_STREAM(s, "cuLaunchKernel");
  EMU_STICKY;
  if (extra) return S.fail(CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernel 'extra' parameter buffers are not supported");
  const std::uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz}, cluster[3] = {1, 1, 1};
  return launch(S, f, grid, block, cluster, smem, params);
}

// cuLaunchKernelEx (CUDA Driver API, "Execution Control"; CUlaunchAttributeID in cuda.h): the
// cluster shape is the one attribute that changes what the virtual device runs; the others are
// scheduling hints and stream semantics a synchronous device keeps by construction, taken and
// ignored. An id cuda.h does not define is CUDA_ERROR_INVALID_VALUE. A cluster of more than 8
// CTAs is non-portable: it needs the function's NON_PORTABLE_CLUSTER_SIZE_ALLOWED, and 16 is the
// most an sm_90 or sm_100 GPU takes (CUDA Programming Guide, "Thread Block Clusters"); a
// function with REQUIRED_CLUSTER_* runs with exactly that shape. Each is
// CUDA_ERROR_INVALID_CLUSTER_SIZE (round 18, F20).
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  EMU_LOCK;
  EMU_NOT_NULL(c, "cuLaunchKernelEx");
  EMU_STREAM(c->hStream, "cuLaunchKernelEx");
  EMU_STICKY;
  if (c->numAttrs > 0 && !c->attrs) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx: numAttrs > 0 and attrs is NULL");
  if (extra) return S.fail(CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernelEx 'extra' parameter buffers are not supported");
  std::uint32_t cluster[3] = {1, 1, 1};
  for (unsigned i = 0; i < c->numAttrs; ++i) {
    switch (c->attrs[i].id) {
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        cluster[0] = c->attrs[i].value.clusterDim.x;
        cluster[1] = c->attrs[i].value.clusterDim.y;
        cluster[2] = c->attrs[i].value.clusterDim.z;
        break;
      case CU_LAUNCH_ATTRIBUTE_IGNORE: case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
      case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
      case CU_LAUNCH_ATTRIBUTE_PRIORITY: case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION: case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE: case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
        break;
      default:
        return S.fail(CUDA_ERROR_INVALID_VALUE,
                      "cuLaunchKernelEx: attrs[" + std::to_string(i) + "] has no launch attribute id " + std::to_string(int(c->attrs[i].id)));
    }
  }
  auto fn = S.functions.find(f);
  if (fn != S.functions.end()) {
    const std::uint64_t ctas = std::uint64_t(cluster[0]) * cluster[1] * cluster[2];
    const unsigned* req = fn->second->required_cluster;
    if (ctas > 16 || (ctas > 8 && !fn->second->non_portable_cluster))
      return S.fail(CUDA_ERROR_INVALID_CLUSTER_SIZE,
                    "cuLaunchKernelEx: a cluster of " + std::to_string(ctas) + " CTAs " +
                        (ctas > 16 ? std::string("is more than the 16 a GPU of this kind takes")
                                   : std::string("is more than the portable 8 and the function does not allow a "
                                                 "non-portable size (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)")));
    if ((req[0] || req[1] || req[2]) && (req[0] != cluster[0] || req[1] != cluster[1] || req[2] != cluster[2]))
      return S.fail(CUDA_ERROR_INVALID_CLUSTER_SIZE,
                    "cuLaunchKernelEx: the function requires a " + std::to_string(req[0]) + "x" + std::to_string(req[1]) + "x" +
                        std::to_string(req[2]) + " cluster (CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*)");
  }
  const std::uint32_t grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ}, block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
  return launch(S, f, grid, block, cluster, c->sharedMemBytes, params);
}

// Memory. Each operation is written once, under the lock (`*_locked`); the synchronous entry
// point runs it in the current context, the asynchronous one in its stream's.
static CUresult mem_alloc_locked(DriverState& S, CUdeviceptr* p, size_t bytes, const char* call) {
  if (!p) return S.fail(CUDA_ERROR_INVALID_VALUE, std::string(call) + ": p is NULL");
  if (bytes == 0) return S.fail(CUDA_ERROR_INVALID_VALUE, std::string(call) + ": 0 bytes");
  mgpu::emu::GlobalMemory& m = S.device->memory();
  if (bytes > kDeviceMemory - std::min(kDeviceMemory, m.allocated_bytes()))
    return S.fail(CUDA_ERROR_OUT_OF_MEMORY, std::to_string(bytes) + " bytes asked with " + std::to_string(m.allocated_bytes()) +
                                                " of the virtual device's " + std::to_string(kDeviceMemory) + " in use");
  try {
    *p = m.alloc(bytes);
  } catch (const std::bad_alloc&) {
    return S.fail(CUDA_ERROR_OUT_OF_MEMORY, "this machine cannot hold " + std::to_string(bytes) + " more bytes");
  }
  return CUDA_SUCCESS;
}
// An address names its allocation's context (unified addressing): freeing needs none current.
static CUresult mem_free_locked(DriverState& S, CUdeviceptr p) {
  if (p == 0 || S.device->memory().free(p)) return CUDA_SUCCESS;
  return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree: the address is no allocation's start");  // round 17, F11
}
static CUresult htod_locked(DriverState& S, CUdeviceptr dst, const void* src, size_t n) {
  if (n > 0) EMU_NOT_NULL(src, "cuMemcpyHtoD");
  std::uint8_t* p = S.device->memory().find(dst, n);
  if (!p) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyHtoD outside an allocation");
  std::memcpy(p, src, n);
  return CUDA_SUCCESS;
}
static CUresult dtoh_locked(DriverState& S, void* dst, CUdeviceptr src, size_t n) {
  if (n > 0) EMU_NOT_NULL(dst, "cuMemcpyDtoH");
  std::uint8_t* p = S.device->memory().find(src, n);
  if (!p) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyDtoH outside an allocation");
  std::memcpy(dst, p, n);
  return CUDA_SUCCESS;
}
static CUresult dtod_locked(DriverState& S, CUdeviceptr dst, CUdeviceptr src, size_t n) {
  std::uint8_t* d = S.device->memory().find(dst, n);
  std::uint8_t* s = S.device->memory().find(src, n);
  if (!d || !s) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyDtoD outside an allocation");
  std::memmove(d, s, n);
  return CUDA_SUCCESS;
}
// cuMemsetD8/16/32: n elements of `width` bytes; n * width may pass 2^64 (round 18, F14).
static CUresult memset_locked(DriverState& S, CUdeviceptr dst, unsigned v, std::size_t width, size_t n, const char* call) {
  std::size_t bytes = 0;
  std::uint8_t* p = __builtin_mul_overflow(n, width, &bytes) ? nullptr : S.device->memory().find(dst, bytes);
  if (!p) return S.fail(CUDA_ERROR_INVALID_VALUE, std::string(call) + " outside an allocation");
  const std::uint8_t b8 = static_cast<std::uint8_t>(v);
  const std::uint16_t b16 = static_cast<std::uint16_t>(v);
  const void* value = width == 1 ? static_cast<const void*>(&b8) : width == 2 ? static_cast<const void*>(&b16) : &v;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(p + width * i, value, width);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  EMU_CURRENT_STICKY("cuMemAlloc");
  return mem_alloc_locked(S, p, bytes, "cuMemAlloc");
}
// cuMemGetInfo ("Memory Management"), in the current context: the virtual device's memory and
// what its allocations leave free (many programs ask at start-up, battery round 20, F51).
CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total) {
  EMU_CURRENT_STICKY("cuMemGetInfo");
  EMU_NOT_NULL(free_bytes, "cuMemGetInfo");
  EMU_NOT_NULL(total, "cuMemGetInfo");
  const std::uint64_t used = std::min<std::uint64_t>(kDeviceMemory, S.device->memory().allocated_bytes());
  *total = static_cast<size_t>(kDeviceMemory);
  *free_bytes = static_cast<size_t>(kDeviceMemory - used);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  EMU_LOCK;
  return mem_free_locked(S, p);
}
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
  EMU_CURRENT_STICKY("cuMemcpyHtoD");
  return htod_locked(S, dst, src, n);
}
CUresult CUDAAPI cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
  EMU_CURRENT_STICKY("cuMemcpyDtoH");
  return dtoh_locked(S, dst, src, n);
}
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  EMU_CURRENT_STICKY("cuMemcpyDtoD");
  return dtod_locked(S, dst, src, n);
}
CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n) {
  EMU_CURRENT_STICKY("cuMemsetD8");
  return memset_locked(S, dst, v, 1, n, "cuMemsetD8");
}
CUresult CUDAAPI cuMemsetD16(CUdeviceptr dst, unsigned short v, size_t n) {
  EMU_CURRENT_STICKY("cuMemsetD16");
  return memset_locked(S, dst, v, 2, n, "cuMemsetD16");
}
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int v, size_t n) {
  EMU_CURRENT_STICKY("cuMemsetD32");
  return memset_locked(S, dst, v, 4, n, "cuMemsetD32");
}
// CU_POINTER_ATTRIBUTE_MEMORY_TYPE (device for a device or managed allocation, host for
// registered host memory), _IS_MANAGED, _DEVICE_POINTER and _HOST_POINTER. Any other address is
// host memory the device cannot see, which the driver answers with CUDA_ERROR_INVALID_VALUE (as
// it does for unregistered pageable memory).
CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute a, CUdeviceptr ptr) {
  EMU_LOCK;
  EMU_NOT_NULL(data, "cuPointerGetAttribute");
  using Kind = mgpu::emu::GlobalMemory::Kind;
  Kind kind{};
  if (!S.device->memory().kind_of(ptr, kind))
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute: the address is no allocation of the virtual device");
  switch (a) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) = kind == Kind::Registered ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *static_cast<unsigned int*>(data) = kind == Kind::Managed; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *static_cast<CUdeviceptr*>(data) = ptr; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (kind == Kind::Device)  // device memory has no host address
        return S.fail(CUDA_ERROR_INVALID_VALUE, "cuPointerGetAttribute: device memory has no host pointer");
      *static_cast<void**>(data) = reinterpret_cast<void*>(ptr);
      return CUDA_SUCCESS;
    default:
      return S.fail(CUDA_ERROR_NOT_SUPPORTED, "cuPointerGetAttribute: only MEMORY_TYPE, IS_MANAGED, DEVICE_POINTER and HOST_POINTER are supported");
  }
}

// Host memory made device-accessible (CUDA Driver API, "Memory Management": cuMemHostRegister,
// cuMemHostUnregister, cuMemHostGetDevicePointer, cuMemAllocManaged). With unified addressing a
// registered range's device pointer is its host pointer; kernels access the host's bytes.
CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  EMU_CURRENT_STICKY("cuMemHostRegister");
  constexpr unsigned kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY |
                              CU_MEMHOSTREGISTER_READ_ONLY;
  if (!p || bytes == 0 || (flags & ~kKnown)) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister: null pointer, no bytes or unknown flags");
  if (flags & CU_MEMHOSTREGISTER_IOMEMORY) return S.fail(CUDA_ERROR_NOT_SUPPORTED, "cuMemHostRegister: I/O memory has no place on the virtual device");
  using Kind = mgpu::emu::GlobalMemory::Kind;
  Kind kind{};
  const auto lo = reinterpret_cast<CUdeviceptr>(p);
  if (S.device->memory().kind_of(lo, kind) || S.device->memory().kind_of(lo + bytes - 1, kind))
    return S.fail(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "cuMemHostRegister: the range overlaps host memory already registered");
  std::string why = S.device->memory().map_host(static_cast<std::uint8_t*>(p), bytes);
  if (!why.empty()) {
    const bool overlap = why.find("already") != std::string::npos;
    return S.fail(overlap ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : CUDA_ERROR_NOT_SUPPORTED, "cuMemHostRegister: " + why);
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostUnregister(void* p) {
  EMU_LOCK_STICKY;
  if (!S.device->memory().unmap_host(reinterpret_cast<CUdeviceptr>(p)))
    return S.fail(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "cuMemHostUnregister: no registration starts at this address");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr* d, void* p, unsigned int flags) {
  EMU_CURRENT_STICKY("cuMemHostGetDevicePointer");
  using Kind = mgpu::emu::GlobalMemory::Kind;
  Kind kind{};
  EMU_NOT_NULL(d, "cuMemHostGetDevicePointer");
  if (flags != 0) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer: flags must be 0");
  if (!S.device->memory().kind_of(reinterpret_cast<CUdeviceptr>(p), kind) || kind == Kind::Device)
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostGetDevicePointer: the address is not registered or managed host memory");
  *d = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* p, size_t bytes, unsigned int flags) {
  EMU_CURRENT_STICKY("cuMemAllocManaged");
  EMU_NOT_NULL(p, "cuMemAllocManaged");
  if (bytes == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuMemAllocManaged: 0 bytes, or flags other than CU_MEM_ATTACH_GLOBAL or _HOST");
  mgpu::emu::GlobalMemory& m = S.device->memory();
  if (bytes > kDeviceMemory - std::min(kDeviceMemory, m.allocated_bytes()))
    return S.fail(CUDA_ERROR_OUT_OF_MEMORY, std::to_string(bytes) + " managed bytes asked with " + std::to_string(m.allocated_bytes()) +
                                                " of the virtual device's " + std::to_string(kDeviceMemory) + " in use");
  try {
    *p = m.alloc_managed(bytes);
  } catch (const std::bad_alloc&) {
    return S.fail(CUDA_ERROR_OUT_OF_MEMORY, "this machine cannot hold " + std::to_string(bytes) + " more managed bytes");
  }
  return CUDA_SUCCESS;
}
// The asynchronous forms run in their stream's context (the NULL stream's is the current one);
// work on the virtual device completes before a call returns.
#define EMU_ASYNC(s, call, expr) \
  EMU_LOCK;                      \
  EMU_STREAM(s, call);           \
  EMU_STICKY;                    \
  return expr

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemcpyHtoDAsync", htod_locked(S, dst, src, n)); }
CUresult CUDAAPI cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemcpyDtoHAsync", dtoh_locked(S, dst, src, n)); }
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemcpyDtoDAsync", dtod_locked(S, dst, src, n)); }
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemcpyAsync", dtod_locked(S, dst, src, n)); }
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemsetD8Async", memset_locked(S, dst, v, 1, n, "cuMemsetD8Async")); }
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemsetD32Async", memset_locked(S, dst, v, 4, n, "cuMemsetD32Async")); }
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemsetD16Async", memset_locked(S, dst, v, 2, n, "cuMemsetD16Async")); }
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* p, size_t n, CUstream s) { EMU_ASYNC(s, "cuMemAllocAsync", mem_alloc_locked(S, p, n, "cuMemAllocAsync")); }
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream s) { EMU_ASYNC(s, "cuMemFreeAsync", mem_free_locked(S, p)); }

// Streams and events: launches complete before they return, so ordering holds trivially.
CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int flags) {
  EMU_LOCK;
  EMU_NOT_NULL(s, "cuStreamCreate");
  EMU_CURRENT("cuStreamCreate");  // made in the current context
  if (flags & ~unsigned(CU_STREAM_NON_BLOCKING))
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate: unknown flags " + std::to_string(flags));
  S.streams.insert(S.next_handle);
  *s = reinterpret_cast<CUstream>(S.next_handle++);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  EMU_LOCK;
  if (!S.streams.erase(reinterpret_cast<std::uint64_t>(s))) return S.fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy: unknown stream handle");
  return CUDA_SUCCESS;
}
// Every launch and copy has finished when its call returns: waiting on a stream, or asking
// whether it has work pending, checks the handle and the context's sticky fault only.
static CUresult stream_finished(CUstream s, const char* call) {
  EMU_LOCK;
  EMU_STREAM(s, call);
  EMU_STICKY;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream s) { return stream_finished(s, "cuStreamSynchronize"); }
// Events (CUDA Driver API, "Event Management"): a handle never created or already destroyed is
// CUDA_ERROR_INVALID_HANDLE wherever one is taken, and flags cuda.h does not define are
// CUDA_ERROR_INVALID_VALUE (battery round 19, F33); events go with their context.
static CUresult event_ok(DriverState& S, CUevent e, const char* call) {
  if (!S.events.count(reinterpret_cast<std::uint64_t>(e)))
    return S.fail(CUDA_ERROR_INVALID_HANDLE, std::string(call) + ": unknown event handle (never created, or destroyed)");
  return CUDA_SUCCESS;
}
#define EMU_EVENT(e, call) \
  if (CUresult r_ = event_ok(S, e, call); r_ != CUDA_SUCCESS) return r_

CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  EMU_LOCK;
  EMU_STREAM(s, "cuStreamWaitEvent");
  EMU_EVENT(e, "cuStreamWaitEvent");
  if (flags != CU_EVENT_WAIT_DEFAULT && flags != CU_EVENT_WAIT_EXTERNAL)
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuStreamWaitEvent: flags " + std::to_string(flags) +
                                                " are neither CU_EVENT_WAIT_DEFAULT nor CU_EVENT_WAIT_EXTERNAL");
  EMU_STICKY;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned int flags) {
  EMU_LOCK;
  EMU_NOT_NULL(e, "cuEventCreate");
  EMU_CURRENT("cuEventCreate");  // made in the current context
  constexpr unsigned kKnown = CU_EVENT_DEFAULT | CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (flags & ~kKnown) return S.fail(CUDA_ERROR_INVALID_VALUE, "cuEventCreate: unknown flags " + std::to_string(flags));
  if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))  // cuda.h: "must be specified with"
    return S.fail(CUDA_ERROR_INVALID_VALUE, "cuEventCreate: CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING");
  S.events.insert(S.next_handle);
  *e = reinterpret_cast<CUevent>(S.next_handle++);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent e) {
  EMU_LOCK;
  EMU_EVENT(e, "cuEventDestroy");
  S.events.erase(reinterpret_cast<std::uint64_t>(e));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  EMU_LOCK;
  EMU_EVENT(e, "cuEventRecord");
  EMU_STREAM(s, "cuEventRecord");
  EMU_STICKY;
  return CUDA_SUCCESS;
}
// Likewise a recorded event has completed (one never recorded is CUDA_SUCCESS on a GPU too).
static CUresult event_finished(CUevent e, const char* call) {
  EMU_LOCK;
  EMU_EVENT(e, call);
  EMU_STICKY;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventSynchronize(CUevent e) { return event_finished(e, "cuEventSynchronize"); }
// cuStreamQuery / cuEventQuery ("Stream Management", "Event Management"): nothing is ever
// pending (above). Programs poll with these; they were missing (battery round 20, F51).
CUresult CUDAAPI cuStreamQuery(CUstream s) { return stream_finished(s, "cuStreamQuery"); }
CUresult CUDAAPI cuEventQuery(CUevent e) { return event_finished(e, "cuEventQuery"); }
CUresult CUDAAPI cuEventElapsedTime(float*, CUevent, CUevent) {
  DriverState& S = DriverState::get();
  std::lock_guard<std::mutex> lock(S.mu);
  return S.fail(CUDA_ERROR_NOT_SUPPORTED, "the virtual device has no clock: it never reports kernel times");
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* base,
                                        const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                        const cuuint32_t* es, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                        CUtensorMapL2promotion, CUtensorMapFloatOOBfill oob) {
  EMU_LOCK;  // before cuInit: CUDA_ERROR_NOT_INITIALIZED, as every driver call but a few (round 18, F20)
  // The arrays the PTX ISA's tensor-map fields come from; globalStrides has rank - 1 entries.
  if (!map || !dims || !box || !es || (rank > 1 && !strides))
    return S.fail(CUDA_ERROR_INVALID_VALUE, std::string("cuTensorMapEncodeTiled: ") +
                                                (!map ? "tensorMap" : !dims ? "globalDim" : !box ? "boxDim" : !es ? "elementStrides" : "globalStrides") +
                                                " is NULL");
  std::string err = mgpu::emu::encode_tensor_map(map, dtype, rank, reinterpret_cast<std::uint64_t>(base), dims, strides, box, es, il, sw, oob);
  return err.empty() ? CUDA_SUCCESS : S.fail(CUDA_ERROR_INVALID_VALUE, "cuTensorMapEncodeTiled: " + err);
}

// Extensions.
CUresult mgpuEmuLastLaunch(const char** json) {
  DriverState& S = DriverState::get();
  std::lock_guard<std::mutex> lock(S.mu);
  if (!json) return S.fail(CUDA_ERROR_INVALID_VALUE, "mgpuEmuLastLaunch: json is NULL");
  *json = S.last_launch_json.c_str();
  return CUDA_SUCCESS;
}
CUresult mgpuEmuLastError(const char** text) {
  DriverState& S = DriverState::get();
  std::lock_guard<std::mutex> lock(S.mu);
  if (!text) return CUDA_ERROR_INVALID_VALUE;  // the reason it would record is the one asked for
  *text = S.last_error.c_str();
  return CUDA_SUCCESS;
}

// cuGetProcAddress (CUDA Driver API, "Driver Entry Point Access"): the entry point of `symbol`
// as of CUDA version `cuda_version`. Where the ABI changed, the newest one not newer than the
// request is returned (cudaTypedefs.h names each, e.g. PFN_cuCtxSynchronize_v13000), and a
// request older than the first ABI gets CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT -- as does a
// request for any entry point older than the version it first existed at (cuCtxGetId at CUDA
// 2.0: cuda_entry_versions.inc). `flags` is one of CU_GET_PROC_ADDRESS_DEFAULT, _LEGACY_STREAM
// and _PER_THREAD_DEFAULT_STREAM (round 18, F21: versions and flags were ignored); streams order
// nothing on a synchronous device, so both stream semantics get the same entry points.
CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult* status);

// cuGetProcAddress's first ABI (CUDA 11.3, PFN_cuGetProcAddress_v11030): no status argument.
static CUresult CUDAAPI cuGetProcAddress_v11030(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  return cuGetProcAddress(symbol, pfn, cuda_version, flags, nullptr);
}

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult* status) {
  struct Versioned { int since; void* fn; };
  static const auto& versioned = *new std::unordered_map<std::string, std::vector<Versioned>>{
      {"cuCtxSynchronize", {{2000, reinterpret_cast<void*>(&cuCtxSynchronize)},
                            {13000, reinterpret_cast<void*>(&cuCtxSynchronize_v2)}}},
      {"cuCtxGetDevice", {{2000, reinterpret_cast<void*>(&cuCtxGetDevice)},
                          {13000, reinterpret_cast<void*>(&cuCtxGetDevice_v2)}}},
      {"cuGetProcAddress", {{11030, reinterpret_cast<void*>(&cuGetProcAddress_v11030)},
                            {12000, reinterpret_cast<void*>(&cuGetProcAddress)}}}};
  if (!symbol || !pfn)  // no std::string of a NULL (round 15, F2)
    return fail_unlocked(CUDA_ERROR_INVALID_VALUE, std::string("cuGetProcAddress: ") + (symbol ? "pfn" : "symbol") + " is NULL");
  if (flags != CU_GET_PROC_ADDRESS_DEFAULT && flags != CU_GET_PROC_ADDRESS_LEGACY_STREAM &&
      flags != CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
    return fail_unlocked(CUDA_ERROR_INVALID_VALUE, "cuGetProcAddress: flags " + std::to_string(flags) +
                                                       " are none of CU_GET_PROC_ADDRESS_DEFAULT, _LEGACY_STREAM, "
                                                       "_PER_THREAD_DEFAULT_STREAM");
  if (auto v = versioned.find(symbol); v != versioned.end()) {
    void* chosen = nullptr;
    for (const Versioned& abi : v->second)
      if (abi.since <= cuda_version) chosen = abi.fn;
    *pfn = chosen;
    if (status) *status = chosen ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return chosen ? CUDA_SUCCESS
                  : fail_unlocked(CUDA_ERROR_NOT_FOUND, std::string("cuGetProcAddress: ") + symbol +
                                                            " has no entry point as old as CUDA version " +
                                                            std::to_string(cuda_version));  // round 18, F21
  }
#define EMU_ENTRY(fn) {#fn, reinterpret_cast<void*>(&fn)}
  static const auto& table = *new std::unordered_map<std::string, void*>{
      EMU_ENTRY(cuInit), EMU_ENTRY(cuDriverGetVersion), EMU_ENTRY(cuGetErrorName), EMU_ENTRY(cuGetErrorString),
      EMU_ENTRY(cuDeviceGetCount), EMU_ENTRY(cuDeviceGet), EMU_ENTRY(cuDeviceGetName), EMU_ENTRY(cuDeviceTotalMem),
      EMU_ENTRY(cuDeviceGetAttribute), EMU_ENTRY(cuDevicePrimaryCtxRetain), EMU_ENTRY(cuDevicePrimaryCtxRelease),
      EMU_ENTRY(cuCtxCreate), EMU_ENTRY(cuCtxDestroy), EMU_ENTRY(cuCtxSetCurrent), EMU_ENTRY(cuCtxGetCurrent), EMU_ENTRY(cuCtxGetId),
      EMU_ENTRY(cuCtxPushCurrent), EMU_ENTRY(cuCtxPopCurrent), EMU_ENTRY(cuModuleLoadData),
      EMU_ENTRY(cuModuleLoadDataEx), EMU_ENTRY(cuModuleUnload), EMU_ENTRY(cuModuleGetFunction), EMU_ENTRY(cuModuleGetGlobal),
      EMU_ENTRY(cuFuncSetAttribute), EMU_ENTRY(cuFuncGetAttribute), EMU_ENTRY(cuLaunchKernel), EMU_ENTRY(cuLaunchKernelEx),
      EMU_ENTRY(cuMemAlloc), EMU_ENTRY(cuMemFree), EMU_ENTRY(cuMemcpyHtoD), EMU_ENTRY(cuMemcpyDtoH), EMU_ENTRY(cuMemcpyDtoD),
      EMU_ENTRY(cuMemsetD8), EMU_ENTRY(cuMemsetD32), EMU_ENTRY(cuMemcpyHtoDAsync), EMU_ENTRY(cuMemcpyDtoHAsync),
      EMU_ENTRY(cuMemcpyDtoDAsync), EMU_ENTRY(cuMemcpyAsync), EMU_ENTRY(cuMemsetD8Async), EMU_ENTRY(cuMemsetD32Async),
      EMU_ENTRY(cuMemsetD16), EMU_ENTRY(cuMemsetD16Async), EMU_ENTRY(cuPointerGetAttribute),
      EMU_ENTRY(cuMemHostRegister), EMU_ENTRY(cuMemHostUnregister), EMU_ENTRY(cuMemHostGetDevicePointer),
      EMU_ENTRY(cuMemAllocManaged),
      EMU_ENTRY(cuMemAllocAsync), EMU_ENTRY(cuMemFreeAsync), EMU_ENTRY(cuStreamCreate), EMU_ENTRY(cuStreamDestroy),
      EMU_ENTRY(cuStreamSynchronize), EMU_ENTRY(cuStreamWaitEvent), EMU_ENTRY(cuEventCreate), EMU_ENTRY(cuEventDestroy),
      EMU_ENTRY(cuEventRecord), EMU_ENTRY(cuEventSynchronize), EMU_ENTRY(cuEventElapsedTime), EMU_ENTRY(cuTensorMapEncodeTiled),
      EMU_ENTRY(cuStreamQuery), EMU_ENTRY(cuEventQuery), EMU_ENTRY(cuMemGetInfo),
      EMU_ENTRY(mgpuEmuLastLaunch), EMU_ENTRY(mgpuEmuLastError)};
#undef EMU_ENTRY
  auto it = table.find(symbol);
  if (it == table.end()) {
    *pfn = nullptr;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return fail_unlocked(CUDA_ERROR_NOT_FOUND, std::string("cuGetProcAddress: no entry point ") + symbol);
  }
  static const auto& first_version = *new std::unordered_map<std::string, int>{
#define X(fn, version) {#fn, version},
#include "core/emu/driver/cuda_entry_versions.inc"
#undef X
  };
  // Entry points whose ABI changed under one name: the virtual driver implements the newer one
  // only (cudaTypedefs.h: the 3.2 ABIs took 64-bit device pointers and sizes; cuCtxCreate's
  // 12.5 one takes CUctxCreateParams), so a request older than it is refused, never handed a
  // function that reads its arguments otherwise (battery round 19, F32).
  static const auto& implemented_abi = *new std::unordered_map<std::string, int>{
      {"cuDeviceTotalMem", 3020},  {"cuModuleGetGlobal", 3020},  {"cuMemAlloc", 3020},
      {"cuMemFree", 3020},         {"cuMemcpyHtoD", 3020},       {"cuMemcpyDtoH", 3020},
      {"cuMemcpyDtoD", 3020},      {"cuMemsetD8", 3020},         {"cuMemsetD16", 3020},
      {"cuMemsetD32", 3020},       {"cuMemcpyHtoDAsync", 3020},  {"cuMemcpyDtoHAsync", 3020},
      {"cuMemcpyDtoDAsync", 3020}, {"cuMemHostGetDevicePointer", 3020}, {"cuCtxCreate", 12050},
      {"cuMemGetInfo", 3020}};
  if (auto v = implemented_abi.find(symbol); v != implemented_abi.end() && cuda_version < v->second) {
    *pfn = nullptr;
    if (status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return fail_unlocked(CUDA_ERROR_NOT_FOUND, std::string("cuGetProcAddress: the virtual driver has ") + symbol +
                                                   "'s ABI of CUDA version " + std::to_string(v->second) +
                                                   " only, not the older one of " + std::to_string(cuda_version));
  }
  if (auto v = first_version.find(symbol); v != first_version.end() && cuda_version < v->second) {
    *pfn = nullptr;
    if (status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return fail_unlocked(CUDA_ERROR_NOT_FOUND, std::string("cuGetProcAddress: ") + symbol + " exists from CUDA version " +
                                                   std::to_string(v->second) + ", not at " + std::to_string(cuda_version));
  }
  *pfn = it->second;
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // extern "C"
