#include "harness/config_sample.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace mgpu::harness {

std::vector<core::TuningConfig> sample_configs(std::vector<core::TuningConfig> all, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  // Each config's (parameter, value) pairs, once: parsing them per pick cost a parse per config per pick.
  std::vector<std::vector<std::pair<std::string, std::string>>> values(all.size());
  std::map<std::string, std::set<std::string>> uncovered;  // parameter -> its values no pick has yet
  for (size_t i = 0; i < all.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(all[i].to_json());
    for (auto& [k, x] : j.items()) {
      values[i].emplace_back(k, x.dump());
      uncovered[k].insert(x.dump());
    }
  }
  size_t largest = 0;  // the largest domain among `all`, for the note below
  for (const auto& [k, vs] : uncovered) largest = std::max(largest, vs.size());
  auto is_new = [&](const std::pair<std::string, std::string>& v) { return uncovered[v.first].count(v.second) > 0; };
  std::vector<core::TuningConfig> out;
  std::vector<bool> taken(all.size(), false);
  while (static_cast<int>(out.size()) < n) {
    // A parameter with as many values left as picks left is tight: each pick must bring one of
    // them, or the sample cannot show them all. So picks cover every value whenever n is at
    // least the largest domain and the space lets one config carry each tight parameter's values.
    const size_t picks_left = static_cast<size_t>(n) - out.size();
    std::set<std::string> tight;
    for (const auto& [k, vs] : uncovered)
      if (!vs.empty() && vs.size() >= picks_left) tight.insert(k);
    size_t best = all.size();
    std::int64_t best_score = 0;
    size_t best_tight = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      if (taken[i]) continue;
      std::int64_t score = 0;
      size_t tight_met = 0;
      for (const auto& v : values[i])
        if (is_new(v)) {
          const std::int64_t left = static_cast<std::int64_t>(uncovered[v.first].size());
          score += left * left;  // the parameters furthest from covered first
          tight_met += tight.count(v.first);
        }
      if (score == 0) continue;
      if (best == all.size() || tight_met > best_tight || (tight_met == best_tight && score > best_score))
        best = i, best_score = score, best_tight = tight_met;
    }
    if (best == all.size()) break;  // every value covered
    taken[best] = true;
    for (const auto& v : values[best]) uncovered[v.first].erase(v.second);
    out.push_back(all[best]);
  }
  // Too few picks for every value: said, never silent (the help promises each value once).
  std::vector<std::string> left_out;
  for (const auto& [k, vs] : uncovered)
    for (const std::string& v : vs) left_out.push_back(k + "=" + v);
  if (!left_out.empty()) {
    std::cerr << fmt::format("note: --sample {} does not show every value of every parameter (the largest domain has {}; a larger --sample does); "
                             "left out: {}\n",
                             n, largest, fmt::join(left_out, ", "));
  }
  for (size_t i = 0; i < all.size() && static_cast<int>(out.size()) < n; ++i)
    if (!taken[i]) out.push_back(all[i]);
  return out;
}

}  // namespace mgpu::harness
