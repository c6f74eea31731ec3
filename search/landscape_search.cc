#include "search/landscape_search.h"

#include <set>

namespace mgpu::search {

StrategyContext landscape_context(const Landscape& landscape, std::uint64_t seed) {
  return StrategyContext{landscape.space(), landscape.configs(), seed, {}, {}};
}

SearchTrace search_landscape(const Landscape& landscape, Strategy& strategy, int max_evals, double max_time_s) {
  SearchTrace trace;
  double elapsed = 0;
  while (static_cast<int>(trace.size()) < max_evals && (max_time_s <= 0 || elapsed < max_time_s)) {
    std::vector<core::TuningConfig> asked = strategy.ask(1);
    if (asked.empty()) break;
    const LandscapePoint* p = landscape.find(asked.front());
    if (!p) {  // strategies ask candidates only; a foreign config is told failed at no cost
      strategy.tell(asked.front(), std::nullopt);
      continue;
    }
    elapsed += p->cost_s;
    trace.push_back({static_cast<std::size_t>(p - landscape.points().data()), elapsed});
    strategy.tell(asked.front(), p->ms);
  }
  return trace;
}

SearchTrace trace_of(const Landscape& landscape, const std::vector<core::TuningConfig>& sequence) {
  SearchTrace trace;
  std::set<std::size_t> seen;
  double elapsed = 0;
  for (const core::TuningConfig& c : sequence) {
    const LandscapePoint* p = landscape.find(c);
    if (!p) continue;
    std::size_t i = static_cast<std::size_t>(p - landscape.points().data());
    if (!seen.insert(i).second) continue;
    elapsed += p->cost_s;
    trace.push_back({i, elapsed});
  }
  return trace;
}

}  // namespace mgpu::search
