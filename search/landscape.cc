#include "search/landscape.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::search {
namespace {

using core::Error;
using core::ErrorKind;

core::ParamSpace space_of(const std::vector<LandscapePoint>& points) {
  if (points.empty()) throw Error(ErrorKind::InvalidInput, "a landscape needs at least one configuration");
  std::vector<core::Param> params;
  for (const auto& [name, v] : points.front().config.values()) params.push_back({name, {}, ""});
  for (core::Param& p : params) {
    std::set<core::ParamValue> seen;
    for (const LandscapePoint& pt : points) {
      auto it = pt.config.values().find(p.name);
      if (it == pt.config.values().end() || pt.config.values().size() != params.size())
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("configuration {} does not have the parameters of {}", pt.config.to_json(),
                                points.front().config.to_json()));
      seen.insert(it->second);
    }
    // Numbers ascending (std::variant orders ints before strings): neighbours in a domain are
    // neighbours in value, which ordinal samplers (CMA-ES) rely on.
    p.domain.assign(seen.begin(), seen.end());
  }
  return core::ParamSpace(std::move(params));
}

}  // namespace

Landscape::Landscape(std::string name, std::vector<LandscapePoint> points)
    : name_(std::move(name)), points_(std::move(points)), space_(space_of(points_)) {
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (!index_.emplace(points_[i].config.to_json(), i).second)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("configuration {} is recorded twice in {}", points_[i].config.to_json(), name_));
    if (points_[i].ms) valid_sorted_.push_back(*points_[i].ms);
  }
  std::sort(valid_sorted_.begin(), valid_sorted_.end());
}

std::vector<core::TuningConfig> Landscape::configs() const {
  std::vector<core::TuningConfig> out;
  out.reserve(points_.size());
  for (const LandscapePoint& p : points_) out.push_back(p.config);
  return out;
}

const LandscapePoint* Landscape::find(const core::TuningConfig& c) const {
  auto it = index_.find(c.to_json());
  return it == index_.end() ? nullptr : &points_[it->second];
}

}  // namespace mgpu::search
