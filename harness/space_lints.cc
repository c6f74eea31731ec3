#include "harness/space_lints.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/cache_usability.h"
#include "core/compile_pool.h"
#include "core/error.h"
#include "core/sass/kernel_evidence.h"
#include "core/sass/nvdisasm.h"
#include "harness/config_sample.h"
#include "harness/sass_report.h"

namespace mgpu::harness {
namespace {

std::string clock_text(double s) { return fmt::format("{}:{:02}", int(s) / 60, int(s) % 60); }

}  // namespace

LintCensus lint_census(const kernels::MatmulTemplate& t, const kernels::MatmulProblem& p, int threads, int sample,
                       std::uint64_t sample_seed, const std::function<void(const std::string&)>& progress) {
  require_nvdisasm("--lints");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<core::TuningConfig> configs = t.valid_configs({p});
  if (sample > 0 && sample < static_cast<int>(configs.size())) configs = sample_configs(configs, sample, sample_seed);
  // One row per binary: run-time parameters zeroed is the kernel's key (as compile --all does).
  LintCensus out;
  std::set<std::string> seen;
  for (const core::TuningConfig& c : configs) {
    core::TuningConfig key = c;
    for (const std::string& name : t.run_time_params()) key.set(name, std::int64_t{0});
    if (seen.insert(key.to_json()).second) out.kernels.push_back({c, false, "", {}});
  }

  core::CompileOptions o = core::CompileOptions::from_environment();
  o.cache_dir = core::CompileCache::default_dir().string();
  if (auto why = core::why_cache_unusable(o.cache_dir)) {
    core::warn_cache_unusable(o.cache_dir, *why);
    o.cache_dir.clear();
  }
  const int n_threads = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  // Batches of a few kernels per thread: progress after each, and no more than a batch of
  // cubins held at once.
  const size_t batch = static_cast<size_t>(n_threads) * 4;
  for (size_t first = 0; first < out.kernels.size(); first += batch) {
    const size_t last = std::min(out.kernels.size(), first + batch);
    std::vector<core::BuiltKernel> built;
    std::vector<core::CompileJob> jobs;
    for (size_t i = first; i < last; ++i) {
      built.push_back(t.build(p, out.kernels[i].config));
      jobs.push_back({built.back().mlir, &t.arch()});
    }
    std::vector<core::CompileOutcome> compiled = core::compile_all(jobs, o, n_threads);
    // nvdisasm runs as a process per kernel: several at once.
    std::vector<std::future<std::vector<core::Lint>>> disassembled(jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j)
      if (compiled[j].ok())
        disassembled[j] = std::async(std::launch::async, [&, j] {
          return core::lints(core::evidence_of(compiled[j].result->units.at(0), built[j].kernel_name));
        });
    for (size_t j = 0; j < jobs.size(); ++j) {
      KernelLintRow& row = out.kernels[first + j];
      if (!compiled[j].ok()) {
        row.error = compiled[j].error->what();
        ++out.failed;
        continue;
      }
      row.lints = disassembled[j].get();  // an nvdisasm failure is the machine's: it ends the census
      row.compiled = true;
      if (row.lints.empty()) ++out.clean;
      for (const core::Lint& l : row.lints) ++out.by_code[l.code];
    }
    if (progress) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double eta = s / last * (out.kernels.size() - last);
      progress(fmt::format("space --lints: {}/{} kernels compiled and disassembled [{}]{}", last, out.kernels.size(),
                           clock_text(s), last < out.kernels.size() ? "  ETA " + clock_text(eta) : ""));
    }
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace mgpu::harness
