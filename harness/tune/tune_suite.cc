#include "harness/tune/tune_suite.h"

#include <fmt/format.h>

#include "core/arch.h"

namespace mgpu::harness {

SuiteReport tune_suite(const TuneOptions& options, const ShapeSuite& suite, bool bucket,
                       const std::atomic<bool>& interrupted, const std::function<void(const Progress&)>& on_progress) {
  const kernels::MatmulTemplate& t = kernels::matmul_template(core::parse_arch(options.arch));
  for (const kernels::MatmulProblem& p : suite.shapes) t.check_problem(p);  // refuse the suite before tuning any
  if (options.device == "emulate") check_emulate_problems(options, suite.shapes);  // each shape's memory, up front
  SuiteReport rep;
  rep.suite = suite.name;
  for (const kernels::MatmulProblem& p : suite.shapes) rep.shapes.push_back({p, std::nullopt, ""});
  std::vector<std::vector<size_t>> groups;
  if (bucket) groups = grid_buckets(t, suite.shapes);
  else
    for (size_t i = 0; i < suite.shapes.size(); ++i) groups.push_back({i});
  for (size_t g = 0; g < groups.size() && !interrupted; ++g) {
    size_t lead = groups[g].front();
    for (size_t i = 1; i < groups[g].size(); ++i) rep.shapes[groups[g][i]].covered_by = suite.shapes[lead].key();
    TuneOptions o = options;
    o.problem = suite.shapes[lead];
    std::string context = fmt::format("{} {}/{} {}", suite.name, g + 1, groups.size(), o.problem.key());
    auto progress = [&](const Progress& p) {
      Progress q = p;
      q.context = context;
      if (on_progress) on_progress(q);
    };
    if (g > 0) o.notify = {};  // the device note is said once
    rep.shapes[lead].report = tune(o, interrupted, progress);
    if (rep.shapes[lead].report->interrupted) rep.interrupted = true;
  }
  rep.interrupted = rep.interrupted || interrupted;
  return rep;
}

}  // namespace mgpu::harness
