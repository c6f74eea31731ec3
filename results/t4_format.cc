#include "results/t4_format.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "core/error.h"
#include "results/output_file.h"

namespace mgpu::results {
namespace {

using core::Error;
using core::ErrorKind;
using nlohmann::json;

// gzread passes a file that is not gzip through unchanged: one reader for both.
std::string read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorKind::InvalidInput, fmt::format("cannot read T4 file {}", path));
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int err = 0;
  const char* why = n < 0 ? gzerror(f, &err) : nullptr;
  std::string reason = why ? why : "";
  gzclose(f);
  if (n < 0) throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {} is not readable: {}", path, reason));
  return text;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error(ErrorKind::IO, "zlib could not start compressing");
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error(ErrorKind::IO, "zlib could not compress the T4 file");
  return out;
}

double ms_per_unit(const std::string& unit, const std::string& path) {
  std::string u = unit;
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::tolower(c); });
  // "miliseconds" is how Kernel Tuner and benchmark_hub spell it.
  if (u.empty() || u == "ms" || u == "milliseconds" || u == "miliseconds" || u == "millisecond") return 1;
  if (u == "s" || u == "seconds" || u == "second") return 1000;
  if (u == "us" || u == "microseconds" || u == "microsecond") return 1e-3;
  throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {}: unknown time unit '{}'", path, unit));
}

core::ParamValue param_value(const json& v, const std::string& where) {
  if (v.is_boolean()) return static_cast<std::int64_t>(v.get<bool>());
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9e15) return static_cast<std::int64_t>(d);
    return v.dump();
  }
  if (v.is_string()) return v.get<std::string>();
  throw Error(ErrorKind::InvalidInput, fmt::format("{}: a parameter value must be a number or a string, not {}", where, v.dump()));
}

double number(const json& v, double scale, const std::string& where) {
  if (!v.is_number()) throw Error(ErrorKind::InvalidInput, fmt::format("{}: {} is not a number", where, v.dump()));
  return v.get<double>() * scale;
}

}  // namespace

std::optional<double> T4Result::objective_ms() const {
  if (!valid()) return std::nullopt;
  if (runtimes_ms.empty()) return time_ms;
  std::vector<double> r = runtimes_ms;
  std::sort(r.begin(), r.end());
  size_t n = r.size();
  return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

double T4Result::cost_ms() const {
  double c = compile_ms;
  for (double r : runtimes_ms) c += r;
  return c;
}

T4File read_t4(const std::string& path) {
  std::string text = read_maybe_gzip(path);
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a T4 file: not a JSON object", path));
  if (!doc.contains("results") || !doc["results"].is_array())
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a T4 file: no \"results\" list", path));
  T4File out;
  if (doc.contains("schema_version") && doc["schema_version"].is_string()) out.schema_version = doc["schema_version"];
  std::string unit;
  if (doc.contains("metadata") && doc["metadata"].is_object() && doc["metadata"].contains("timeunit") &&
      doc["metadata"]["timeunit"].is_string())
    unit = doc["metadata"]["timeunit"];
  const double scale = ms_per_unit(unit, path);
  size_t i = 0;
  for (const json& r : doc["results"]) {
    std::string where = fmt::format("T4 file {}, result {}", path, i++);
    if (!r.is_object() || !r.contains("configuration") || !r["configuration"].is_object() || r["configuration"].empty())
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: no \"configuration\" object", where));
    T4Result t;
    for (const auto& [k, v] : r["configuration"].items()) t.config.set(k, param_value(v, where));
    if (r.contains("times") && r["times"].is_object()) {
      const json& times = r["times"];
      if (times.contains("compilation") && !times["compilation"].is_null())
        t.compile_ms = number(times["compilation"], scale, where + " compilation time");
      if (times.contains("runtimes") && times["runtimes"].is_array())
        for (const json& x : times["runtimes"]) t.runtimes_ms.push_back(number(x, scale, where + " runtime"));
    }
    if (r.contains("invalidity") && r["invalidity"].is_string()) t.invalidity = r["invalidity"];
    if (r.contains("correctness") && r["correctness"].is_number()) t.correct = r["correctness"].get<double>() != 0;
    if (r.contains("timestamp") && r["timestamp"].is_string()) t.timestamp = r["timestamp"];
    if (r.contains("measurements") && r["measurements"].is_array())
      for (const json& m : r["measurements"])
        if (m.is_object() && m.value("name", "") == "time" && m.contains("value") && m["value"].is_number())
          t.time_ms = m["value"].get<double>() * scale;
    if (t.valid() && !t.objective_ms())
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: a valid result without runtimes or a time measurement", where));
    out.results.push_back(std::move(t));
  }
  if (out.results.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {} has no results", path));
  return out;
}

void write_t4(const T4File& file, const std::string& path) {
  json results = json::array();
  for (const T4Result& t : file.results) {
    json config = json::object();
    for (const auto& [k, v] : t.config.values()) {
      if (const auto* i = std::get_if<std::int64_t>(&v)) config[k] = *i;
      else config[k] = std::get<std::string>(v);
    }
    json times{{"compilation", t.compile_ms}, {"framework", 0}, {"search_algorithm", 0}, {"validation", 0}};
    if (!t.runtimes_ms.empty()) times["runtimes"] = t.runtimes_ms;
    json value = t.valid() && t.time_ms ? json(*t.time_ms)
               : t.valid()              ? json(*t.objective_ms())
               : t.invalidity == "compile" ? json("CompilationFailedConfig")
                                         : json("RuntimeFailedConfig");
    results.push_back({{"timestamp", t.timestamp},
                       {"configuration", config},
                       {"times", times},
                       {"invalidity", t.invalidity},
                       {"correctness", t.correct ? 1 : 0},
                       {"measurements", json::array({{{"name", "time"}, {"value", value}, {"unit", "ms"}}})},
                       {"objectives", json::array({"time"})}});
  }
  json doc{{"schema_version", "1.0.0"}, {"metadata", {{"timeunit", "milliseconds"}}}, {"results", results}};
  std::string text = doc.dump() + "\n";
  bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  write_file_atomically(path, gz ? gzip(text) : text);
}

bool is_sqlite_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == 16 && std::string(head, 16) == std::string("SQLite format 3\0", 16);
}

}  // namespace mgpu::results
