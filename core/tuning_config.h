// A template's knobs and one setting of them. Contract: a TuningConfig maps parameter names
// to integer or enum (string) values; to_json() is canonical (keys sorted, no spaces), so equal
// configs give equal text -- the form stored in databases and hashed. from_json() accepts an
// object of ints and strings and throws Error{InvalidInput} naming the offending key.
// A ParamSpace lists each parameter's domain in order; enumerate() walks the Cartesian
// product in a fixed, documented order (last parameter fastest).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mgpu::core {

using ParamValue = std::variant<std::int64_t, std::string>;
std::string to_string(const ParamValue& v);

class TuningConfig {
 public:
  // Transparent comparison: lookups by a name literal make no std::string (a search walks
  // millions of configs, each read parameter by parameter).
  using Values = std::map<std::string, ParamValue, std::less<>>;
  TuningConfig() = default;
  explicit TuningConfig(const std::map<std::string, ParamValue>& values) : values_(values.begin(), values.end()) {}

  void set(const std::string& name, ParamValue v) { values_[name] = std::move(v); }
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  std::int64_t get_int(std::string_view name) const;
  const std::string& get_str(std::string_view name) const;
  const Values& values() const { return values_; }

  std::string to_json() const;
  static TuningConfig from_json(const std::string& text);
  bool operator==(const TuningConfig&) const = default;
  bool operator<(const TuningConfig& o) const { return values_ < o.values_; }

 private:
  friend class ParamSpace;  // enumerate() updates one config in place
  Values values_;
};

struct Param {
  std::string name;
  std::vector<ParamValue> domain;
  std::string help;
};

class ParamSpace {
 public:
  explicit ParamSpace(std::vector<Param> params) : params_(std::move(params)) {}
  const std::vector<Param>& params() const { return params_; }
  const Param& param(const std::string& name) const;
  std::uint64_t size() const;  // product of the domain sizes
  // `stop`, when given and set, ends the walk early (a stop signal during a walk of millions).
  void enumerate(const std::function<void(const TuningConfig&)>& visit, const std::atomic<bool>* stop = nullptr) const;
  // The same walk, telling `visit` the index (into params()) of the first parameter whose value
  // changed since the previous config; every later one may have changed too (0 for the first
  // config). A caller keeping a parsed copy of the config updates only those: the walk of the
  // Hopper space (5.4 million configs) then costs its validity rules, not 5.4 million parses.
  void enumerate_changes(const std::function<void(const TuningConfig&, size_t first_changed)>& visit,
                         const std::atomic<bool>* stop = nullptr) const;
  // Throws Error{InvalidInput} if `c` lacks a parameter, has an unknown one, or a value
  // outside its domain.
  void check_member(const TuningConfig& c) const;

 private:
  std::vector<Param> params_;
};

}  // namespace mgpu::core
