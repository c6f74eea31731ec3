#include "core/compile_pool.h"

#include <atomic>
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
      } catch (const std::exception& e) {
        out[i].error = Error(ErrorKind::Compile, e.what());
      }
    }
  };
  std::vector<std::jthread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();  // the calling thread works too
  return out;  // jthreads join here
}

}  // namespace mgpu::core
