#include "harness/op/op_suite.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_input.h"

namespace mgpu::harness {
namespace {

using core::Error;
using core::ErrorKind;
using Row = std::map<std::string, std::string>;

std::string trimmed(std::string s) {
  const char* ws = " \t\r";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

// The problem flag a column or key names ("seq_q" and "seq-q" alike), "" for name and note
// (read by people), or Error naming the flags there are.
std::string flag_of(const kernels::OpTemplate& t, const std::string& column, const std::string& where) {
  std::string name = column;
  std::replace(name.begin(), name.end(), '_', '-');
  if (name == "name" || name == "note") return "";
  std::string names;
  for (const kernels::ProblemFlag& f : t.problem_flags()) {
    if (f.name == name) return name;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  throw Error(ErrorKind::InvalidInput, fmt::format("{}: unknown column '{}' ({} problems have {}; and name, note)",
                                                   where, column.substr(0, 40), t.op(), names));
}

bool is_switch(const kernels::OpTemplate& t, const std::string& flag) {
  for (const kernels::ProblemFlag& f : t.problem_flags())
    if (f.name == flag) return f.is_switch;
  return false;
}

// A switch's cell: true/1 sets it, false/0 sets it off.
void set_value(const kernels::OpTemplate& t, Row& row, const std::string& flag, const std::string& value,
               const std::string& where) {
  if (flag.empty() || value.empty()) return;  // an empty cell leaves the column out: the command line's, else the default
  if (!is_switch(t, flag)) {
    row[flag] = value;
    return;
  }
  if (value == "true" || value == "1") row[flag] = "true";
  else if (value == "false" || value == "0") row[flag] = "false";  // off, whatever the command line says
  else
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}: {} is true or false (or 1 or 0), got '{}'", where, flag, value.substr(0, 40)));
}

std::vector<std::pair<Row, std::string>> read_csv(const kernels::OpTemplate& t, const std::string& path,
                                                   std::vector<std::string>* comments) {
  std::istringstream in(core::read_input_file(path, "problem suite file"));
  std::vector<std::pair<Row, std::string>> rows;
  std::vector<std::string> columns;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (n == 1 && (line.rfind("\xFF\xFE", 0) == 0 || line.rfind("\xFE\xFF", 0) == 0))
      throw Error(ErrorKind::InvalidInput, fmt::format("{} is UTF-16: save it as UTF-8", path));
    line = trimmed(line);
    if (line.empty()) continue;
    const std::string where = fmt::format("{} line {}", path, n);
    if (line[0] == '#') {  // counted: a first cell such as a name "#1 prefill" reads as one
      comments->push_back(where);
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(trimmed(cell));
    if (line.back() == ',') cells.push_back("");
    if (columns.empty()) {
      std::set<std::string> seen;
      for (const std::string& c : cells) {
        const std::string flag = flag_of(t, c, where);
        if (!seen.insert(flag.empty() ? c : flag).second)
          throw Error(ErrorKind::InvalidInput, fmt::format("{}: the column '{}' is named twice", where, c.substr(0, 40)));
        columns.push_back(flag);
      }
      continue;
    }
    if (cells.size() != columns.size())
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: {} cells where the header names {} columns", where,
                                                       cells.size(), columns.size()));
    Row row;
    for (std::size_t i = 0; i < cells.size(); ++i) set_value(t, row, columns[i], cells[i], where);
    rows.emplace_back(std::move(row), where);
  }
  if (columns.empty())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} has no header line: its first line names the columns (the problem flags)", path));
  return rows;
}

std::vector<std::pair<Row, std::string>> read_json(const kernels::OpTemplate& t, const std::string& path,
                                                    std::string* name) {
  nlohmann::json doc;
  const std::string text = core::read_input_file(path, "problem suite file");
  try {
    doc = core::parse_user_json(text, path);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not valid JSON: {}", path, core::json_error_text(e)));
  }
  std::string base;  // the problems' JSON pointer, for quoting a number as written
  if (doc.is_object()) {
    base = "/problems";
    for (const auto& [k, v] : doc.items())
      if (k != "name" && k != "problems")
        throw Error(ErrorKind::InvalidInput, fmt::format("{}: unknown key '{}' (a suite object has name and problems)",
                                                         path, k.substr(0, 40)));
    if (doc.contains("name")) {
      if (!doc["name"].is_string()) throw Error(ErrorKind::InvalidInput, fmt::format("{}: name is text", path));
      *name = doc["name"].get<std::string>();
    }
    doc = doc.contains("problems") ? doc["problems"] : nlohmann::json();
  }
  if (!doc.is_array())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}: a problem suite is a JSON array of problems, or an object with \"problems\"", path));
  std::vector<std::pair<Row, std::string>> rows;
  auto at = [&](std::size_t i, const std::string& k) {
    return base + (nlohmann::json::json_pointer() / i / k).to_string();
  };
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::string where = fmt::format("{} problem #{}", path, i + 1);
    if (!doc[i].is_object())
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: a problem is an object of flag: value", where));
    Row row;
    std::map<std::string, std::string> named;  // flag -> the key that named it
    for (const auto& [k, v] : doc[i].items()) {
      const std::string flag = flag_of(t, k, where);
      if (!flag.empty() && !named.emplace(flag, k).second)
        throw Error(ErrorKind::InvalidInput, fmt::format("{}: '{}' and '{}' name one flag ({}): give it once", where,
                                                         named[flag].substr(0, 40), k.substr(0, 40), flag));
      std::string value;
      if (v.is_boolean()) value = v.get<bool>() ? "true" : "false";
      else if (v.is_number_integer())  // -0 reads as 0: quote it as written (battery round 15, F5)
        value = v == 0 ? core::number_as_written(text, at(i, k), v) : v.dump();
      else if (v.is_string()) value = v.get<std::string>();
      else
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("{}: '{}' must be a whole number, text or true/false, got {}", where, k.substr(0, 40),
                                v.is_number() ? core::number_as_written(text, at(i, k), v)
                                              : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 40)));
      set_value(t, row, flag, value, where);
    }
    rows.emplace_back(std::move(row), where);
  }
  return rows;
}

}  // namespace

std::string comments_note(const OpProblemSuite& suite) {
  if (suite.comments.empty()) return "";
  const bool one = suite.comments.size() == 1;
  return fmt::format(" ({} line{} beginning with '#' skipped as {}: {}{})", suite.comments.size(), one ? "" : "s",
                     one ? "a comment" : "comments", one ? "" : "the first ", suite.comments.front());
}

OpProblemSuite load_op_suite(const kernels::OpEntry& op, const kernels::OpTemplate& t, const std::string& spec,
                             const std::map<std::string, std::string>& given) {
  namespace fs = std::filesystem;
  OpProblemSuite suite;
  std::vector<std::pair<Row, std::string>> rows;
  const std::string ext = fs::path(spec).extension().string();
  if (ext == ".csv" || ext == ".json") {
    core::check_input_file(spec, "problem suite file");  // a FIFO would block, /dev/zero never end
    suite.name = fs::path(spec).stem().string();
    rows = ext == ".csv" ? read_csv(t, spec, &suite.comments) : read_json(t, spec, &suite.name);
  } else {
    std::string names;
    for (const kernels::OpSuite& s : op.suites ? op.suites() : std::vector<kernels::OpSuite>{}) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", s.name);
      if (s.name != spec) continue;
      suite.name = s.name;
      for (std::size_t i = 0; i < s.rows.size(); ++i) rows.emplace_back(s.rows[i], fmt::format("suite {} row {}", s.name, i + 1));
    }
    if (suite.name.empty())
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("'{}' is no {} suite ({}) and no .csv or .json file", spec.substr(0, 80), op.op,
                              names.empty() ? "it has none built in" : "built in: " + names));
  }
  // A flag given here fills what the rows leave out: one every row gives fills nothing, and was
  // dropped without a word (round 19, F46: `--shapes fa3 --heads 4` tuned fa3's 16 and 32 heads).
  for (const auto& [flag, value] : given) {
    bool fills = rows.empty();
    for (const auto& [row, where] : rows) fills = fills || !row.count(flag);
    if (!fills)
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("--{} fills nothing: every problem of the suite {} gives {} itself (a problem flag "
                              "fills only what a row leaves out); drop --{}", flag, suite.name.substr(0, 80), flag, flag));
  }
  std::set<std::string> seen;
  for (auto& [row, where] : rows) {
    // What the row leaves out: the command line's explicit value, else the flag's default.
    Row values;
    for (const kernels::ProblemFlag& f : t.problem_flags()) {
      auto g = given.find(f.name);
      if (g != given.end()) values[f.name] = g->second;
      else if (!f.is_switch) values[f.name] = f.default_value;
    }
    for (const auto& [flag, value] : row) {
      if (is_switch(t, flag) && value == "false") values.erase(flag);
      else values[flag] = value;
    }
    kernels::Problem p;
    try {
      p = t.problem(values);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::InvalidInput) throw;
      throw Error(ErrorKind::InvalidInput, fmt::format("{}: {}", where, e.what()));
    }
    if (!seen.insert(p.key).second) {
      ++suite.duplicates_dropped;
      continue;
    }
    suite.problems.push_back(std::move(p));
    suite.where.push_back(where);
  }
  if (suite.problems.empty())
    throw Error(ErrorKind::InvalidInput, fmt::format("the problem suite {} is empty{}", spec, comments_note(suite)));
  return suite;
}

}  // namespace mgpu::harness
