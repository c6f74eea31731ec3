#include "harness/tune/shape_suite.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_input.h"
#include "kernels/matmul_suites.h"

namespace mgpu::harness {
namespace {

using core::Error;
using core::ErrorKind;

std::string trim(std::string s) {
  auto blank = [](unsigned char c) { return std::isspace(c); };
  s.erase(s.begin(), std::find_if_not(s.begin(), s.end(), blank));
  s.erase(std::find_if_not(s.rbegin(), s.rend(), blank).base(), s.end());
  return s;
}

// A value as the message shows it: a byte that prints nothing (a NUL ended the text there) is
// written as \xNN, and a long value is cut.
std::string shown_value(const std::string& text) {
  std::string out;
  for (unsigned char c : text.substr(0, 80)) {
    if (c >= 0x20 && c != 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return text.size() > 80 ? out + "..." : out;
}

// m, n or k: a whole number in the range a TMA descriptor takes (kernels::validate's), said of
// the field, never of a command-line flag: a row of a file is no --m the user gave.
std::int64_t positive(const std::string& field, const std::string& text) {
  constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
  const std::string unsigned_part = text.rfind('+', 0) == 0 ? text.substr(1) : text;  // "+5" is 5, as stoll read it
  bool digits = !unsigned_part.empty() && unsigned_part.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || unsigned_part.find_first_not_of('0') == std::string::npos)
    throw Error(ErrorKind::InvalidInput, fmt::format("{} must be a positive integer, got '{}'", field, shown_value(text)));
  std::string significant = unsigned_part.substr(unsigned_part.find_first_not_of('0'));
  if (significant.size() > 10 || std::stoll(significant) > kMaxDim)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} must be between 1 and {}, got {}", field, kMaxDim, shown_value(text)));
  return std::stoll(significant);
}

// One shape from named fields; what is absent comes from `defaults`.
kernels::MatmulProblem shape_of(const std::map<std::string, std::string>& f, const kernels::MatmulProblem& defaults) {
  kernels::MatmulProblem p = defaults;
  for (const char* need : {"m", "n", "k"})
    if (!f.count(need)) throw Error(ErrorKind::InvalidInput, fmt::format("'{}' is missing", need));
  for (const auto& [name, value] : f) {
    if (name == "m") p.m = positive("m", value);
    else if (name == "n") p.n = positive("n", value);
    else if (name == "k") p.k = positive("k", value);
    else if (name == "dtype") p.in_dtype = kernels::parse_dtype(value);
    else if (name == "out_dtype") p.out_dtype = kernels::parse_dtype(value);
    else if (name == "layout") p.b_layout = kernels::parse_b_layout(value);
    else if (name != "name" && name != "note")
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("unknown column '{}' (m, n, k, dtype, out_dtype, layout)", name));
  }
  try {
    kernels::validate(p);
  } catch (const Error& e) {  // it speaks of --m, --n, --k: a field of a file is no flag
    std::string why = e.what();
    for (const char* flag : {"--m ", "--n ", "--k "})
      for (size_t at; (at = why.find(flag)) != std::string::npos;) why.erase(at, 2);
    throw Error(e.kind(), why);
  }
  return p;
}

// Spreadsheets (Excel's "CSV UTF-8") start the file with a byte order mark; its three bytes
// would make the header's "m" unrecognisable. UTF-16 text cannot be read as ASCII at all.
void skip_byte_order_mark(std::istream& in, const std::string& path) {
  char head[3] = {};
  in.read(head, 3);
  std::string start(head, static_cast<size_t>(in.gcount()));
  if (start.rfind("\xFF\xFE", 0) == 0 || start.rfind("\xFE\xFF", 0) == 0)
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is UTF-16 text: save it as UTF-8 or ASCII", path));
  in.clear();
  in.seekg(start == "\xEF\xBB\xBF" ? 3 : 0);
}

// The columns a CSV header may name: a shape's fields, and words for people.
const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> names = {"m", "n", "k", "dtype", "out_dtype", "layout", "name", "note"};
  return names;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A first row is a header when it names a column ("n,k,m" and "x,m,n,k" as well as "m,n,k"), or
// when none of its fields is a number. A row of data always has numbers (m, n, k), and its
// words (a dtype, a layout) are no column's name, so "64,64,64,fp8" stays a row.
bool is_header(const std::vector<std::string>& fields) {
  bool any_number = false;
  for (const std::string& f : fields) {
    if (std::find(csv_columns().begin(), csv_columns().end(), lower(f)) != csv_columns().end()) return true;
    if (!f.empty() && std::isdigit(static_cast<unsigned char>(f[0]))) any_number = true;
  }
  return !any_number;
}

// The header's columns, lower-cased: one named twice would have its last value taken without a
// word (as a JSON key given twice is refused, so is this), and a name no shape has is refused
// even where its fields are empty.
std::vector<std::string> header_columns(const std::vector<std::string>& fields) {
  std::vector<std::string> columns;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string name = lower(fields[i]);
    if (name.empty())
      throw Error(ErrorKind::InvalidInput, fmt::format("the header's column {} has no name (m, n, k, dtype, out_dtype, layout)", i + 1));
    if (std::find(csv_columns().begin(), csv_columns().end(), name) == csv_columns().end())
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("unknown column '{}' in the header (m, n, k, dtype, out_dtype, layout, name, note)", shown_value(fields[i])));
    auto before = std::find(columns.begin(), columns.end(), name);
    if (before != columns.end())
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("the header names the column '{}' twice (columns {} and {}): which value is meant?", name,
                              before - columns.begin() + 1, i + 1));
    columns.push_back(name);
  }
  return columns;
}

std::vector<kernels::MatmulProblem> read_csv(const std::string& path, const kernels::MatmulProblem& defaults,
                                             std::vector<std::string>* where) {
  // Read whole first: a file this user may not read is said so, never "empty".
  std::istringstream in(core::read_input_file(path, "shape suite file"));
  skip_byte_order_mark(in, path);
  std::vector<std::string> columns = {"m", "n", "k", "dtype", "out_dtype", "layout"};
  std::vector<kernels::MatmulProblem> out;
  std::string line;
  bool first = true;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(trim(f));
    try {
      if (first && is_header(fields)) {
        columns = header_columns(fields);
        first = false;
        continue;
      }
      first = false;
      if (fields.size() > columns.size())
        throw Error(ErrorKind::InvalidInput, fmt::format("{} fields, at most {} expected", fields.size(), columns.size()));
      std::map<std::string, std::string> named;
      for (size_t i = 0; i < fields.size(); ++i)
        if (!fields[i].empty()) named[columns[i]] = fields[i];
      out.push_back(shape_of(named, defaults));
      where->push_back(fmt::format("{} line {}", path, number));
    } catch (const Error& e) {
      throw Error(ErrorKind::InvalidInput, fmt::format("{} line {}: {}", path, number, e.what()));
    }
  }
  return out;
}

std::vector<kernels::MatmulProblem> read_json(const std::string& path, const kernels::MatmulProblem& defaults,
                                              std::string* name, std::vector<std::string>* where) {
  std::istringstream in(core::read_input_file(path, "shape suite file"));
  nlohmann::json doc;
  try {
    doc = core::parse_user_json(in, path);  // a shape's "m" given twice is refused, not last-wins
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not valid JSON: {}", path, core::json_error_text(e)));
  }
  if (doc.is_object()) {
    if (doc.contains("name") && doc["name"].is_string()) *name = doc["name"].get<std::string>();
    if (!doc.contains("shapes")) throw Error(ErrorKind::InvalidInput, fmt::format("{} has no \"shapes\" array", path));
    doc = doc["shapes"];
  }
  if (!doc.is_array()) throw Error(ErrorKind::InvalidInput, fmt::format("{}: the shapes must be a JSON array", path));
  std::vector<kernels::MatmulProblem> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    try {
      if (!doc[i].is_object()) throw Error(ErrorKind::InvalidInput, "not an object like {\"m\": 128, ...}");
      std::map<std::string, std::string> named;
      for (auto& [k, v] : doc[i].items()) {
        if (k == "name" || k == "note") continue;  // words for people, whatever their shape
        // Printing a nested value recurses once per level: a file of "[[[[..." would end the stack.
        if (v.is_structured()) throw Error(ErrorKind::InvalidInput, fmt::format("'{}' must be a number or a string", k));
        named[k] = v.is_string() ? v.get<std::string>() : v.dump();
      }
      out.push_back(shape_of(named, defaults));
      where->push_back(fmt::format("{} shape #{}", path, i + 1));
    } catch (const Error& e) {
      throw Error(ErrorKind::InvalidInput, fmt::format("{} shape #{}: {}", path, i + 1, e.what()));
    }
  }
  return out;
}

}  // namespace

ShapeSuite load_shape_suite(const std::string& spec, const kernels::MatmulProblem& defaults) {
  namespace fs = std::filesystem;
  ShapeSuite suite;
  std::vector<kernels::MatmulProblem> shapes;
  std::vector<std::string> where;
  std::string ext = fs::path(spec).extension().string();
  if (ext == ".csv" || ext == ".json") {
    core::check_input_file(spec, "shape suite file");  // a FIFO would block, /dev/zero never end
    suite.name = fs::path(spec).stem().string();
    shapes = ext == ".csv" ? read_csv(spec, defaults, &where) : read_json(spec, defaults, &suite.name, &where);
  } else {
    suite.name = spec;
    shapes = kernels::named_suite(spec, defaults.in_dtype, defaults.out_dtype);
    for (const kernels::MatmulProblem& p : shapes) where.push_back(fmt::format("suite {} shape {}", spec, p.key()));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (seen.insert(shapes[i].key()).second) {
      suite.shapes.push_back(shapes[i]);
      suite.where.push_back(i < where.size() ? where[i] : spec);
    } else {
      ++suite.duplicates_dropped;
    }
  if (suite.shapes.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("the shape suite {} is empty", spec));
  return suite;
}

void check_suite_shapes(const ShapeSuite& suite, const kernels::MatmulTemplate& t) {
  for (size_t i = 0; i < suite.shapes.size(); ++i) {
    try {
      t.check_problem(suite.shapes[i]);
    } catch (const Error& e) {
      // The template speaks to the command line ("make --k a multiple of 8"); a row of a file
      // is no flag the user gave: its file and line instead, its fields without dashes.
      std::string why = e.what();
      for (const char* flag : {"--m", "--n", "--k", "--dtype", "--out-dtype", "--layout"})
        for (size_t at; (at = why.find(flag)) != std::string::npos;) why.erase(at, 2);
      throw Error(e.kind(), fmt::format("{}: {}", i < suite.where.size() ? suite.where[i] : suite.name, why));
    }
  }
}

std::vector<std::vector<size_t>> grid_buckets(const kernels::MatmulTemplate& t,
                                              const std::vector<kernels::MatmulProblem>& shapes) {
  const std::vector<std::array<int, 3>> units = t.grid_units();
  std::map<std::vector<std::int64_t>, size_t> bucket_of;
  std::vector<std::vector<size_t>> buckets;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const kernels::MatmulProblem& p = shapes[i];
    std::vector<std::int64_t> key = {static_cast<std::int64_t>(p.in_dtype), static_cast<std::int64_t>(p.out_dtype),
                                     static_cast<std::int64_t>(p.b_layout)};
    for (const auto& u : units)
      for (auto [extent, unit] : {std::pair{p.m, u[0]}, {p.n, u[1]}, {p.k, u[2]}}) key.push_back((extent + unit - 1) / unit);
    auto [it, fresh] = bucket_of.emplace(key, buckets.size());
    if (fresh) buckets.emplace_back();
    buckets[it->second].push_back(i);
  }
  return buckets;
}

}  // namespace mgpu::harness
