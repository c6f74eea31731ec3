#include "harness/tune/shape_suite.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
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

std::int64_t positive(const std::string& field, const std::string& text) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 1)
    throw Error(ErrorKind::InvalidInput, fmt::format("{} must be a positive integer, got '{}'", field, text));
  return v;
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
  kernels::validate(p);
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
      if (first && !fields.empty() && (fields[0] == "m" || fields[0] == "M")) {  // a header
        columns.clear();
        for (std::string f : fields) {
          std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return std::tolower(c); });
          columns.push_back(f);
        }
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
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not valid JSON: {}", path, e.what()));
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
