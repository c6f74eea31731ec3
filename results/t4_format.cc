#include "results/t4_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <stdexcept>
#include <streambuf>

#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_input.h"
#include "results/output_file.h"

namespace mgpu::results {
namespace {

using core::Error;
using core::ErrorKind;
using nlohmann::json;

// The most JSON text a T4 file may hold once decompressed. The largest published landscape
// (benchmark_hub's dedispersion) is 19 MB of text; 1 GiB leaves room for files fifty times
// larger while a gzip bomb (deflate expands up to ~1000x) stops here, not at the memory limit.
constexpr std::uint64_t kMaxT4Text = std::uint64_t{1} << 30;
// T4 nests five levels (document, results, result, times, runtimes); a limit keeps a file of
// "[[[[..." from costing a stack frame per level where a value is printed in a message.
constexpr int kMaxT4Depth = 64;
// The shortest kernel runtime taken as a measurement (a picosecond); see number().
constexpr double kMinRuntimeMs = 1e-9;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The text of a T4 file, plain or gzip, as a stream nlohmann parses as it goes: a file of
// blanks costs two buffers, not its size (squeeze_blanks()). zlib's inflate rather than gzread, which passes a file
// that is not gzip through as text and ignores garbage after the compressed data. Reading stops
// at the first problem (failure() says which) and nlohmann sees the end of its input.
class T4Text : public std::streambuf {
 public:
  explicit T4Text(const std::string& path) : path_(path), in_(open_regular(path)) {
    if (!in_) throw Error(ErrorKind::InvalidInput, fmt::format("cannot read T4 file {}", path));
    int b0 = in_.get(), b1 = in_.get();
    if (b0 == EOF) throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {} is empty", path));
    in_.clear();
    in_.seekg(0);
    gzip_ = b0 == 0x1f && b1 == 0x8b;
    if (!gzip_ && ends_with(path, ".gz"))
      throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {} is not a gzip file (it does not start like one)", path));
    if (gzip_ && inflateInit2(&z_, 15 + 16) != Z_OK)  // 16: gzip framing only
      throw Error(ErrorKind::IO, "zlib could not start decompressing");
  }
  ~T4Text() override {
    if (gzip_) inflateEnd(&z_);
  }
  T4Text(const T4Text&) = delete;
  T4Text& operator=(const T4Text&) = delete;

  // A T4 input is a regular file, as every input file is: a FIFO or pipe (/dev/stdin) is
  // refused by name before it is opened (opening a FIFO waits for a writer; reading it, its
  // gzip check cannot seek back), as are devices and sockets.
  static std::string open_regular(const std::string& path) {
    if (std::filesystem::is_directory(path)) throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {} is a folder", path));
    std::error_code ec;
    auto st = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) core::check_input_file(path, "T4 file");
    return path;
  }

  // Why the text ended early ("" when the file was read to its end).
  const std::string& failure() const { return failure_; }

 protected:
  int_type underflow() override {
    while (failure_.empty()) {
      size_t n = gzip_ ? inflate_some() : read_some();
      if (n == 0) break;
      total_ += n;
      if (total_ > kMaxT4Text) {
        fail(fmt::format("holds more than {} GiB of text{}: refused (a gzip bomb?)", kMaxT4Text >> 30,
                         gzip_ ? " once decompressed" : ""));
        break;
      }
      n = squeeze_blanks(n);
      if (n > 0) {
        setg(out_, out_, out_ + n);
        return traits_type::to_int_type(out_[0]);
      }
    }
    return traits_type::eof();
  }

 private:
  void fail(const std::string& why) { failure_ = fmt::format("T4 file {} {}", path_, why); }

  size_t read_some() {
    in_.read(out_, sizeof out_);
    return static_cast<size_t>(in_.gcount());
  }

  // Decompresses until some text comes out, the data ends, or it turns out damaged.
  size_t inflate_some() {
    while (true) {
      if (z_.avail_in == 0) {
        in_.read(in_buf_, sizeof in_buf_);
        z_.next_in = reinterpret_cast<Bytef*>(in_buf_);
        z_.avail_in = static_cast<uInt>(in_.gcount());
        if (z_.avail_in == 0) {
          if (member_open_) fail(after_a_member() ? "is a damaged gzip file: garbage follows its compressed data"
                                                  : "is a truncated gzip file: it ends inside its compressed data");
          return 0;
        }
      }
      z_.next_out = reinterpret_cast<Bytef*>(out_);
      z_.avail_out = sizeof out_;
      member_open_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      size_t n = sizeof out_ - z_.avail_out;
      member_out_ += n;
      if (rc == Z_STREAM_END) {  // concatenated gzip members are one file, as for gunzip
        ++members_;
        member_open_ = false;
        member_out_ = 0;
        inflateReset(&z_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(after_a_member() ? "is a damaged gzip file: garbage follows its compressed data"
                              : fmt::format("is a damaged gzip file: {}", z_.msg ? z_.msg : "zlib error"));
        return 0;
      }
      if (n > 0) return n;
    }
  }
  bool after_a_member() const { return members_ > 0 && member_out_ == 0; }

  // nlohmann's lexer keeps every character between two values (for its messages) until the
  // next one: a run of blanks would cost its length. Outside strings blanks mean nothing in
  // JSON, so each run becomes one.
  size_t squeeze_blanks(size_t n) {
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      char c = out_[i];
      bool blank = !in_string_ && (c == ' ' || c == '\t' || c == '\n' || c == '\r');
      if (blank && after_blank_) continue;
      if (in_string_) {
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') in_string_ = false;
      } else if (c == '"') {
        in_string_ = true;
      }
      after_blank_ = blank;
      out_[kept++] = c;
    }
    return kept;
  }

  std::string path_;
  std::ifstream in_;
  bool gzip_ = false;
  z_stream z_{};
  bool member_open_ = false;
  bool in_string_ = false, escaped_ = false, after_blank_ = false;
  std::uint64_t members_ = 0, member_out_ = 0, total_ = 0;
  std::string failure_;
  char in_buf_[1 << 16], out_[1 << 16];
};

// A value as a message shows it: short, however long the value.
std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The document, parsed as it is read; Error{InvalidInput} when the file is unreadable,
// damaged, too large or too deep, or not JSON.
json parse_t4(const std::string& path) {
  auto t4 = std::make_unique<T4Text>(path);  // its buffers are too big for the stack
  std::istream in(t4.get());
  auto shallow = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxT4Depth)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("{} is not a T4 file: nested more than {} levels deep", path, kMaxT4Depth));
    return true;
  };
  json doc;
  try {
    doc = json::parse(in, core::refuse_duplicate_keys(path, shallow), true);  // a key twice: which one?
  } catch (const json::out_of_range& e) {  // a number beyond a double (1e999): round 19, F29
    if (!t4->failure().empty()) throw Error(ErrorKind::InvalidInput, t4->failure());
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a T4 file: not valid JSON ({})", path, core::json_error_text(e)));
  } catch (const json::parse_error& e) {
    // Text that is not UTF-8 is said as such (not "not a JSON object"): where its bad byte is.
    if (t4->failure().empty() && std::string_view(e.what()).find("ill-formed UTF-8") != std::string_view::npos)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("{} is not a T4 file: invalid UTF-8 at byte offset {} of its JSON text", path,
                              e.byte ? e.byte - 1 : 0));
    // Say where the JSON breaks (a NaN, which JSON has not, or a cut-off file is not "not a JSON
    // object"), unless the stream's own failure below explains it.
    if (t4->failure().empty()) {
      std::string why = core::json_error_text(e);  // nlohmann's exception id means nothing to a user
      if (why.size() > 300) why = why.substr(0, 300) + "...";
      throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a T4 file: not valid JSON ({})", path, why));
    }
    doc = json(json::value_t::discarded);
  }
  // The stream's failure explains a parse error it caused (the text just stopped), and also
  // refuses a document whose gzip data is damaged after the JSON's end.
  if (!t4->failure().empty()) throw Error(ErrorKind::InvalidInput, t4->failure());
  if (doc.is_discarded() || !doc.is_object())
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a T4 file: not a JSON object", path));
  return doc;
}

// T4 1.x is what this reader knows; a new major version may mean anything.
void check_schema_version(const json& doc, const std::string& path) {
  if (!doc.contains("schema_version"))
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is not a T4 file: no \"schema_version\" (T4 1.x files have one)", path));
  const json& v = doc["schema_version"];
  std::string text = v.is_string() ? v.get<std::string>() : "";
  std::string major = text.substr(0, text.find('.'));
  if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("T4 file {}: schema_version {} is no version (a string like \"1.0.0\")", path, shown(v)));
  if (major != "1")
    throw Error(ErrorKind::InvalidInput,
                fmt::format("T4 file {} has schema_version {}: this reader supports T4 schema 1.x only", path, text));
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
  if (u == "ns" || u == "nanoseconds" || u == "nanosecond") return 1e-6;
  throw Error(ErrorKind::InvalidInput,
              fmt::format("T4 file {}: unknown time unit '{}' (s, ms, us or ns)", path, unit));
}

// A measurement's own "unit" (Kernel Tuner writes "ms" beside each time) is what its value is
// in; the file's metadata.timeunit is the default for one that names none ("" included, which
// Kernel Tuner writes for quantities without a unit). A unit this reader does not know is
// refused: the value taken in another unit would be stored 1000 times off.
double measurement_scale(const json& m, double file_scale, const std::string& where) {
  if (!m.contains("unit") || m["unit"].is_null()) return file_scale;
  const json& u = m["unit"];
  if (!u.is_string())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} time measurement: the unit {} is not a name like \"ms\"", where, shown(u)));
  const std::string unit = u.get<std::string>();
  if (unit.empty()) return file_scale;
  try {
    return ms_per_unit(unit, "");
  } catch (const Error&) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} time measurement: unknown time unit {} (s, ms, us or ns)", where, shown(u)));
  }
}

// A config here is a JSON object of integers and strings (results/stored_config.h): a value of
// another type cannot be stored as it is, and was changed without a word -- 1.5 stored as the
// text "1.5", true as 1, and exported back so (battery round 20, F55). Refused instead; a whole
// number written 2.0 is the integer 2, as everywhere.
core::ParamValue param_value(const json& v, const std::string& where, const std::string& name) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9e15) return static_cast<std::int64_t>(d);
    if (std::isfinite(d) && d == std::floor(d))  // written with a fraction or exponent, read as a double
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("{}: parameter {} is {}, an integer {} (a config value must fit an int64, read exactly)",
                              where, name, v.dump(), std::abs(d) >= 0x1p63 ? "beyond the 64-bit range" : "beyond 2^53"));
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}: the parameter value {} is not a whole number: this tool stores configs of integers "
                            "and strings, and would store it changed (as the text \"{}\"); nothing was imported",
                            where, shown(v), v.dump()));
  }
  if (v.is_boolean())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}: the parameter value {} is a boolean: this tool stores configs of integers and strings, "
                            "and would store it changed (as {}); nothing was imported", where, shown(v),
                            v.get<bool>() ? 1 : 0));
  if (v.is_string()) return v.get<std::string>();
  throw Error(ErrorKind::InvalidInput, fmt::format("{}: a parameter value must be a number or a string, not {}", where, shown(v)));
}

// A time: a negative or overflowing one would rank first or last among real measurements, and a
// kernel's runtime of 0 (`positive`) is no measurement: the store refuses such a row as damaged.
double number(const json& v, double scale, const std::string& where, bool positive = false) {
  if (!v.is_number()) throw Error(ErrorKind::InvalidInput, fmt::format("{}: {} is not a number", where, shown(v)));
  double ms = v.get<double>() * scale;
  if (!(positive ? ms > 0 : ms >= 0) || !std::isfinite(ms))
    throw Error(ErrorKind::InvalidInput, fmt::format("{}: {} is not a time (a finite number, {})", where, shown(v),
                                                     positive ? "above 0" : "0 or more"));
  // A kernel's time below a picosecond is no measurement: a subnormal one (5e-324) made its
  // FLOP rate infinite ("inf TFLOP/s") wherever it was shown.
  if (positive && ms < kMinRuntimeMs)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}: {} is not a time: {:g} ms is below {:g} ms (a picosecond), faster than any kernel "
                            "runs (a subnormal time made its TFLOP/s infinite)", where, shown(v), ms, kMinRuntimeMs));
  return ms;
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
  json doc = parse_t4(path);
  check_schema_version(doc, path);
  if (!doc.contains("results") || !doc["results"].is_array())
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not a T4 file: no \"results\" list", path));
  T4File out;
  out.schema_version = doc["schema_version"];
  std::string unit;
  if (doc.contains("metadata") && doc["metadata"].is_object() && doc["metadata"].contains("timeunit")) {
    const json& u = doc["metadata"]["timeunit"];
    if (!u.is_string() && !u.is_null())
      throw Error(ErrorKind::InvalidInput, fmt::format("T4 file {}: the time unit {} is not a name like \"milliseconds\"", path, shown(u)));
    if (u.is_string()) unit = u;
  }
  const double scale = ms_per_unit(unit, path);
  size_t i = 0;
  for (const json& r : doc["results"]) {
    std::string where = fmt::format("T4 file {}, result {}", path, i++);
    if (!r.is_object() || !r.contains("configuration") || !r["configuration"].is_object() || r["configuration"].empty())
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: no \"configuration\" object", where));
    T4Result t;
    for (const auto& [k, v] : r["configuration"].items()) t.config.set(k, param_value(v, where, k));
    if (r.contains("times") && r["times"].is_object()) {
      const json& times = r["times"];
      if (times.contains("compilation") && !times["compilation"].is_null())
        t.compile_ms = number(times["compilation"], scale, where + " compilation time");
      if (times.contains("runtimes") && times["runtimes"].is_array())
        for (const json& x : times["runtimes"]) t.runtimes_ms.push_back(number(x, scale, where + " runtime", true));
    }
    if (r.contains("invalidity") && r["invalidity"].is_string()) t.invalidity = r["invalidity"];
    if (r.contains("correctness") && r["correctness"].is_number()) t.correct = r["correctness"].get<double>() != 0;
    if (r.contains("timestamp") && r["timestamp"].is_string()) t.timestamp = r["timestamp"];
    if (r.contains("measurements") && r["measurements"].is_array())
      for (const json& m : r["measurements"]) {
        if (!m.is_object() || !m.contains("name") || m["name"] != "time") continue;
        // A failed config's time is its error's name (Kernel Tuner writes "CompilationFailedConfig");
        // a valid result's time that is not a number is not "no time", and of two times the
        // file does not say which is meant.
        if (!m.contains("value") || !m["value"].is_number()) {
          if (!t.valid()) continue;
          throw Error(ErrorKind::InvalidInput, fmt::format("{}: the time measurement's value {} is not a number", where,
                                                           m.contains("value") ? shown(m["value"]) : std::string("(none)")));
        }
        if (t.time_ms)
          throw Error(ErrorKind::InvalidInput, fmt::format("{}: two \"time\" measurements: which one is meant?", where));
        t.time_ms = number(m["value"], measurement_scale(m, scale, where), where + " time measurement", true);
      }
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
    if (t.valid() && !t.objective_ms())  // a valid result is a time: never a value read from nothing
      throw std::logic_error("write_t4: a valid result without a time");
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
  std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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
