#include "harness/config_sample.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace mgpu::harness {

std::vector<core::TuningConfig> sample_configs(std::vector<core::TuningConfig> all, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  std::set<std::string> seen;
  auto values_of = [](const core::TuningConfig& c) {
    std::vector<std::string> v;
    nlohmann::json j = nlohmann::json::parse(c.to_json());
    for (auto& [k, x] : j.items()) v.push_back(k + "=" + x.dump());
    return v;
  };
  std::vector<core::TuningConfig> out;
  std::vector<bool> taken(all.size(), false);
  while (static_cast<int>(out.size()) < n) {
    size_t best = all.size();
    int gain = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      if (taken[i]) continue;
      int g = 0;
      for (const std::string& v : values_of(all[i])) g += !seen.count(v);
      if (g > gain) gain = g, best = i;
    }
    if (best == all.size()) break;  // every value covered
    taken[best] = true;
    for (const std::string& v : values_of(all[best])) seen.insert(v);
    out.push_back(all[best]);
  }
  for (size_t i = 0; i < all.size() && static_cast<int>(out.size()) < n; ++i)
    if (!taken[i]) out.push_back(all[i]);
  return out;
}

}  // namespace mgpu::harness
