#include "core/cupti.h"

#include <cupti_activity.h>  // types and enums only; the functions are bound at run time

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/toolkit.h"

namespace mgpu::core {

struct KernelTrace::Api {
  DynamicLibrary lib;
#define MGPU_CUPTI(fn) decltype(&::fn) fn = nullptr;
  MGPU_CUPTI(cuptiActivityEnable)
  MGPU_CUPTI(cuptiActivityDisable)
  MGPU_CUPTI(cuptiActivityRegisterCallbacks)
  MGPU_CUPTI(cuptiActivityFlushAll)
  MGPU_CUPTI(cuptiActivityGetNextRecord)
  MGPU_CUPTI(cuptiGetResultString)
#undef MGPU_CUPTI
};

namespace {

// Completed records arrive on CUPTI's thread; take() reads them under the lock. Never
// destroyed: CUPTI flushes its buffers once more while the process exits, after the program's
// static destructors have run (seen on an H100, 2026-11-24: with these as plain globals the
// gpu tests' process, CUPTI loaded, ended in "double free or corruption" after every test passed).
std::mutex& g_mutex = *new std::mutex;
std::vector<KernelSpan>& g_spans = *new std::vector<KernelSpan>;
KernelTrace::Api* g_api = nullptr;
constexpr std::size_t kBufferBytes = 1 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<KernelSpan> spans;
  CUpti_Activity* record = nullptr;
  while (g_api->cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    // start and end sit at the same offsets in every kernel record version.
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    spans.push_back({k->name ? k->name : "", k->start, k->end});
  }
  std::free(buffer);
  std::lock_guard lock(g_mutex);
  g_spans.insert(g_spans.end(), spans.begin(), spans.end());
}

void check(KernelTrace::Api& api, CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  api.cuptiGetResultString(r, &text);
  throw Error(ErrorKind::Unavailable, fmt::format("{} failed: {}", call, text ? text : std::to_string(int(r))));
}

}  // namespace

KernelTrace::KernelTrace() : api_(new Api{load_runtime_library(RuntimeLibrary::Cupti)}) {
#define MGPU_BIND(fn) api_->fn = reinterpret_cast<decltype(api_->fn)>(api_->lib.require<void()>(#fn));
  MGPU_BIND(cuptiActivityEnable)
  MGPU_BIND(cuptiActivityDisable)
  MGPU_BIND(cuptiActivityRegisterCallbacks)
  MGPU_BIND(cuptiActivityFlushAll)
  MGPU_BIND(cuptiActivityGetNextRecord)
  MGPU_BIND(cuptiGetResultString)
#undef MGPU_BIND
  g_api = api_;
  check(*api_, api_->cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
        "cuptiActivityRegisterCallbacks");
}

KernelTrace& KernelTrace::get() {
  static std::once_flag once;
  static KernelTrace* trace = nullptr;  // lives as long as the process: CUPTI keeps its callbacks
  static std::optional<Error> failure;
  std::call_once(once, [] {
    try {
      trace = new KernelTrace();
    } catch (const Error& e) {
      failure.emplace(ErrorKind::Unavailable, fmt::format("CUPTI kernel tracing unavailable: {}", e.what()));
    }
  });
  if (failure) throw *failure;
  return *trace;
}

void KernelTrace::begin() {
  if (active_) return;
  check(*api_, api_->cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
  active_ = true;
  take();  // nothing from before begin()
}

std::vector<KernelSpan> KernelTrace::take() {
  check(*api_, api_->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  std::lock_guard lock(g_mutex);
  return std::exchange(g_spans, {});
}

void KernelTrace::end() {
  if (!active_) return;
  check(*api_, api_->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityDisable");
  active_ = false;
}

}  // namespace mgpu::core
