#include "core/tuning_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"

namespace mgpu::core {

std::string to_string(const ParamValue& v) {
  return std::holds_alternative<std::int64_t>(v) ? std::to_string(std::get<std::int64_t>(v)) : std::get<std::string>(v);
}

std::int64_t TuningConfig::get_int(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || !std::holds_alternative<std::int64_t>(it->second))
    throw Error(ErrorKind::InvalidInput, fmt::format("config has no integer '{}'", name));
  return std::get<std::int64_t>(it->second);
}

const std::string& TuningConfig::get_str(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || !std::holds_alternative<std::string>(it->second))
    throw Error(ErrorKind::InvalidInput, fmt::format("config has no text value '{}'", name));
  return std::get<std::string>(it->second);
}

std::string TuningConfig::to_json() const {
  nlohmann::json j = nlohmann::json::object();  // std::map iteration: keys sorted
  for (const auto& [k, v] : values_) {
    if (std::holds_alternative<std::int64_t>(v)) j[k] = std::get<std::int64_t>(v);
    else j[k] = std::get<std::string>(v);
  }
  return j.dump();
}

namespace {
// A value quoted in a message: whole up to 80 characters, else cut there and marked, so a long
// number is never quoted as another, shorter one (battery round 17, F12).
std::string quoted(const std::string& s) { return s.size() > 80 ? s.substr(0, 80) + "..." : s; }
}  // namespace

TuningConfig TuningConfig::from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = parse_user_json(text, "config");  // {"tile_m":64,"tile_m":128} would silently be 128
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("config is not valid JSON: {}", json_error_text(e)));
  }
  if (!j.is_object()) throw Error(ErrorKind::InvalidInput, "config must be a JSON object of name: value");
  TuningConfig c;
  for (auto& [k, v] : j.items()) {
    // A number above int64's range is unsigned in nlohmann: refuse it rather than wrap it.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      throw Error(ErrorKind::InvalidInput, fmt::format("config value of '{}' is out of range: {}", k, quoted(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))));
    if (v.is_number_integer()) c.set(k, v.get<std::int64_t>());
    else if (v.is_string()) c.set(k, v.get<std::string>());
    else if (v.is_number_float() && whole_number(v.get<double>()))
      // 64.0 means 64 but is not how a config is written; say so rather than list a string as an option.
      throw Error(ErrorKind::InvalidInput, fmt::format("config value of '{}' must be written as an integer ({}), got {}", k,
                                                       *whole_number(v.get<double>()), quoted(number_as_written(text, (nlohmann::json::json_pointer() / k).to_string(), v))));
    else if (v.is_number_float()) {
      // Quoted as typed: 99999999999999999999 is an integer out of range, not the 1e+20 JSON
      // reads it as (battery round 15, F5).
      const std::string written = number_as_written(text, (nlohmann::json::json_pointer() / k).to_string(), v);
      if (written.find_first_not_of("-0123456789") == std::string::npos)
        throw Error(ErrorKind::InvalidInput, fmt::format("config value of '{}' is out of range: {} (beyond 64 bits)", k,
                                                         quoted(written)));
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("config value of '{}' must be an integer or a string, got {}", k, quoted(written)));
    } else
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("config value of '{}' must be an integer or a string, got {}", k,
                              quoted(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))));
  }
  return c;
}

const Param& ParamSpace::param(const std::string& name) const {
  for (const Param& p : params_)
    if (p.name == name) return p;
  throw Error(ErrorKind::InvalidInput, fmt::format("no parameter named '{}'", name));
}

std::uint64_t ParamSpace::size() const {
  std::uint64_t n = 1;
  for (const Param& p : params_) n *= p.domain.size();
  return n;
}

void ParamSpace::enumerate(const std::function<void(const TuningConfig&)>& visit, const std::atomic<bool>* stop) const {
  enumerate_changes([&](const TuningConfig& c, size_t) { visit(c); }, stop);
}

void ParamSpace::enumerate_changes(const std::function<void(const TuningConfig&, size_t)>& visit,
                                   const std::atomic<bool>* stop) const {
  std::vector<size_t> idx(params_.size(), 0);
  if (size() == 0) return;
  // One config, updated in place from the first parameter that changed (mostly the last one):
  // building a fresh map per config was most of the cost of walking millions of them.
  TuningConfig c;
  for (size_t i = 0; i < params_.size(); ++i) c.set(params_[i].name, params_[i].domain[0]);
  std::vector<ParamValue*> slot;
  for (const Param& p : params_) slot.push_back(&c.values_.at(p.name));
  size_t changed = 0;
  for (std::uint64_t n = 1;; ++n) {
    visit(c, changed);
    if (stop && n % 4096 == 0 && stop->load()) return;
    size_t d = params_.size();
    while (d > 0) {
      --d;
      if (++idx[d] < params_[d].domain.size()) {
        *slot[d] = params_[d].domain[idx[d]];
        break;
      }
      idx[d] = 0;
      *slot[d] = params_[d].domain[0];
      if (d == 0) return;
    }
    if (params_.empty()) return;
    changed = d;
  }
}

void ParamSpace::check_member(const TuningConfig& c) const {
  for (const Param& p : params_) {
    auto it = c.values().find(p.name);
    if (it == c.values().end()) throw Error(ErrorKind::InvalidInput, fmt::format("config lacks '{}'", p.name));
    // A value of the other type reads like a domain member when printed ("64"): say the type.
    if (!p.domain.empty() && p.domain.front().index() != it->second.index())
      throw Error(ErrorKind::InvalidInput,
                  std::holds_alternative<std::string>(it->second)
                      ? fmt::format("'{}' must be an integer, got the string \"{}\"", p.name, to_string(it->second))
                      : fmt::format("'{}' must be a string, got the integer {}", p.name, to_string(it->second)));
    if (std::find(p.domain.begin(), p.domain.end(), it->second) == p.domain.end()) {
      std::string choices;
      for (const ParamValue& v : p.domain) choices += (choices.empty() ? "" : ", ") + to_string(v);
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("'{}' = {} is outside its domain ({})", p.name, to_string(it->second), choices));
    }
  }
  for (const auto& [k, v] : c.values()) param(k);  // unknown names throw
}

}  // namespace mgpu::core
