#include "harness/tune/confirmation.h"

#include <algorithm>

namespace mgpu::harness {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double measurement_cap_s(const ConfirmOptions& o, std::size_t finalists, double strict_cap_s, double floor_s) {
  const double share = o.budget_s / double(std::max<std::size_t>(1, finalists) * std::max(1, o.min_passes));
  return std::min(strict_cap_s, std::max(floor_s, share));
}

Confirmation confirm(std::vector<Finalist> finalists, const StrictMeasure& measure, const ConfirmOptions& o,
                     const std::atomic<bool>& interrupted, const SecondsNow& now) {
  Confirmation c;
  const double start = now();
  std::vector<size_t> contenders(finalists.size());
  for (size_t i = 0; i < contenders.size(); ++i) contenders[i] = i;
  auto by_median = [&](std::vector<size_t> v) {
    std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) {
      return median(finalists[a].strict_ms) < median(finalists[b].strict_ms);
    });
    return v;
  };
  std::vector<size_t> previous;
  for (int pass = 0; pass < o.max_passes && c.ended_because.empty() && !contenders.empty(); ++pass) {
    std::vector<size_t> order = contenders;
    if (pass % 2) std::reverse(order.begin(), order.end());  // A B C, then C B A: drift hits all alike
    ++c.passes;
    for (size_t i : order) {
      if (interrupted) {
        c.ended_because = "stopped";
        break;
      }
      if (now() - start >= o.budget_s) {
        c.ended_because = "time budget";
        break;
      }
      Finalist& f = finalists[i];
      std::optional<double> ms = measure(f.config, pass == 0);
      ++c.measurements;
      if (ms) f.strict_ms.push_back(*ms);
    }
    if (!c.ended_because.empty()) break;
    // A finalist none of whose measurements succeeded keeps its search time and leaves the race.
    std::erase_if(contenders, [&](size_t i) { return finalists[i].strict_ms.empty(); });
    if (contenders.empty()) break;
    if (pass + 1 < o.min_passes) {
      previous = by_median(contenders);
      continue;
    }
    const std::vector<size_t> now_ranked = by_median(contenders);
    const std::vector<double>& lead = finalists[now_ranked.front()].strict_ms;
    const double lead_slowest = *std::max_element(lead.begin(), lead.end());
    std::erase_if(contenders, [&](size_t i) {
      const std::vector<double>& s = finalists[i].strict_ms;
      return *std::min_element(s.begin(), s.end()) > lead_slowest;
    });
    const std::vector<size_t> ranked = by_median(contenders);
    // Settled: the contenders still in the race stand in the order the previous pass gave them.
    std::erase_if(previous, [&](size_t i) { return std::find(contenders.begin(), contenders.end(), i) == contenders.end(); });
    if (contenders.size() <= 1) c.ended_because = "one contender left";
    else if (ranked == previous) c.ended_because = "settled";
    else if (pass + 1 == o.max_passes) c.ended_because = "max passes";
    previous = ranked;
  }
  if (c.ended_because.empty()) c.ended_because = contenders.empty() ? "no finalist could be timed" : "max passes";
  for (Finalist& f : finalists)
    if (!f.strict_ms.empty()) f.ms = median(f.strict_ms);
  std::stable_sort(finalists.begin(), finalists.end(), [](const Finalist& a, const Finalist& b) { return a.ms < b.ms; });
  c.ranked = std::move(finalists);
  c.seconds = now() - start;
  return c;
}

}  // namespace mgpu::harness
