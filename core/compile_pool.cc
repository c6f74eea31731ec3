#include "core/compile_pool.h"

#include <atomic>
#include <new>
#include <system_error>
#include <thread>

namespace mgpu::core {

std::vector<CompileOutcome> compile_all(std::span<const CompileJob> jobs, const CompileOptions& options,
                                        int threads) {
  std::vector<CompileOutcome> out(jobs.size());
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(jobs.size()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      try {
        out[i].result = compile_module(jobs[i].mlir_text, *jobs[i].arch, options);
      } catch (const Error& e) {
        out[i].error = e;
      } catch (const std::bad_alloc&) {
        // This machine's memory (a ulimit -v), not the config's failure: Unavailable, which a
        // tuning run or verification records as env_error (not counted, tried again later).
        out[i].error = Error(ErrorKind::Unavailable, "out of memory while compiling (this machine's limit, not the config's failure)");
      } catch (const std::exception& e) {
        out[i].error = Error(ErrorKind::Compile, e.what());
      }
    }
  };
  std::vector<std::jthread> pool;
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // no thread to be had (a ulimit -v or -u): the ones started, and this one, do the work
    }
  }
  worker();  // the calling thread works too
  return out;  // jthreads join here
}

}  // namespace mgpu::core
