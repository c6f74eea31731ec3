// A measured (or predicted) landscape: a finite space of configs, each with its recorded answer,
// that a strategy can search offline -- a T4 file of brute-forced results, a results database,
// or the cost model's predictions. Contract: `points` are the space's members (the candidates a
// strategy may ask); a point's `ms` is its objective (nullopt: the config failed -- compile,
// launch or verification) and `cost_s` what evaluating it cost when it was recorded (compile +
// benchmark), which simulated time budgets spend. `space` lists each parameter's domain in the
// order its values were first seen (numbers ascending). find() is exact on canonical JSON.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tuning_config.h"

namespace mgpu::search {

struct LandscapePoint {
  core::TuningConfig config;
  std::optional<double> ms;
  double cost_s = 0;
};

class Landscape {
 public:
  // Error{InvalidInput} when `points` is empty, a point lacks a parameter of another, or two
  // points are the same config.
  Landscape(std::string name, std::vector<LandscapePoint> points);

  const std::string& name() const { return name_; }
  const core::ParamSpace& space() const { return space_; }
  const std::vector<LandscapePoint>& points() const { return points_; }
  std::vector<core::TuningConfig> configs() const;
  const LandscapePoint* find(const core::TuningConfig& c) const;
  // The objectives of the points that did not fail, ascending (the methodology's distribution).
  const std::vector<double>& valid_sorted() const { return valid_sorted_; }

 private:
  std::string name_;
  std::vector<LandscapePoint> points_;
  core::ParamSpace space_;
  std::map<std::string, std::size_t> index_;
  std::vector<double> valid_sorted_;
};

}  // namespace mgpu::search
