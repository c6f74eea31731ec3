#include "results/export.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/c_literal.h"
#include "core/error.h"
#include "core/json_input.h"
#include "results/output_file.h"
#include "results/stored_config.h"
#include "results/verified_best.h"

namespace mgpu::results {
namespace {

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  return out;
}

// Text as a CSV file holds it: valid UTF-8 with no control bytes but tab and line breaks. A
// byte that is neither (a NUL, half of a character) is written as \xNN, so a damaged message
// column no longer made the export binary (battery round 20, F45).
std::string csv_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  auto escape = [&](unsigned char c) { out += fmt::format("\\x{:02x}", c); };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') escape(c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    // The length a lead byte announces, and the smallest code point it may carry (no overlong
    // forms, no surrogates, nothing past U+10FFFF).
    const int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = n > 0 && i + n <= s.size();
    std::uint32_t cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
    for (int k = 1; ok && k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xc0) == 0x80;
      cp = (cp << 6) | (d & 0x3f);
    }
    ok = ok && !(n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) && !(n == 4 && (cp < 0x10000 || cp > 0x10ffff));
    if (!ok) {
      escape(c);
      ++i;
      continue;
    }
    out.append(s, i, n);
    i += n;
  }
  return out;
}

std::string csv_field(const std::string& raw) {
  const std::string s = csv_text(raw);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

template <class T>
std::string opt_str(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "";
}

// Database text as a C++ string literal: whatever it holds, the header reads back the same bytes.
std::string cpp_string(const std::string& s) { return core::c_string_literal(s); }

// Text in a // comment: a line break would end it and make the rest code.
std::string comment_text(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  return out;
}

// A config parameter's name becomes a member of the config struct: it must be an identifier,
// not a keyword, and not one of the members the header adds.
bool member_name(const std::string& s) {
  static const std::set<std::string> kTaken = {
      "median_ms", "verification", "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool",
      "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const",
      "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield",
      "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace",
      "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
      "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq"};
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || kTaken.count(s)) return false;
  if (s.size() >= 2 && s[0] == '_' && (s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1])))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// A namespace name for an arch: its slug, made an identifier when it is not one.
std::string arch_namespace(const std::string& arch) {
  std::string s = slug(arch);
  return member_name(s) ? s : "arch_" + s;
}

// The type of a config value in the header's struct: "int" (std::int64_t), "string"
// (std::string_view), or "" for what the header cannot hold (null, a float, a bool, an object, an
// array, an integer past int64).
std::string cpp_type(const nlohmann::json& v) {
  if (v.is_string()) return "string";
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() <= std::uint64_t(INT64_MAX) ? "int" : "";
  if (v.is_number_integer()) return "int";
  return "";
}

nlohmann::json config_of(const TrialRow& r, const std::string& db) {
  nlohmann::json c = nlohmann::json::parse(r.config_json, nullptr, /*allow_exceptions=*/false);
  if (!c.is_object())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is damaged: trial {} has an unreadable config ({})", db, r.id,
                                  comment_text(r.config_json.substr(0, 80))));
  return c;
}

// Parameter name -> type, of the config every row of a template must match.
using Schema = std::map<std::string, std::string>;

Schema schema_of(const nlohmann::json& config, const std::string& what) {
  Schema out;
  for (auto& [k, v] : config.items()) {
    if (!member_name(k))
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: parameter {} cannot be a C++ member name", what, cpp_string(k)));
    std::string type = cpp_type(v);
    if (type.empty())
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: parameter {} is {}, which the C++ header cannot hold (an integer of "
                                    "int64's range or a string)", what, k, comment_text(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 40))));
    out[k] = type;
  }
  return out;
}

// Refuses (Error{InvalidInput}) an output path that is one of the export's inputs: the store's
// database (and its -wal/-shm), or the shape suite's file when `suite.file` names an existing
// one (a named suite has none; a missing file was never read).
void refuse_inputs(const std::string& out, Store& store, const SuiteShapes& suite) {
  refuse_database_path(out, {store.path()});
  std::error_code ec;
  if (suite.file.empty() || !std::filesystem::exists(suite.file, ec)) return;
  // The suite's file has no -wal or -shm; refuse_database_path also checks those names, harmlessly.
  refuse_database_path(out, {suite.file}, "the shape suite");
}

}  // namespace

ProblemFields problem_fields(const ProblemRecord& p, const std::string& what) {
  if (p.kernel == "matmul")  // the store's own columns (every schema)
    return {{"m", p.m}, {"n", p.n}, {"k", p.k}, {"dtype", p.dtype}, {"out_dtype", p.out_dtype}, {"layout", p.layout}};
  nlohmann::ordered_json fields = nlohmann::ordered_json::parse(p.fields, nullptr, /*allow_exceptions=*/false);
  if (!fields.is_object() || fields.empty())
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{}: its {} problem has no fields ({})", what, comment_text(p.kernel),
                                  comment_text(p.fields.substr(0, 80))));
  ProblemFields out;
  for (const auto& [name, value] : fields.items()) {
    // A number is read by value, as every reader of the row reads it (stored_config.h): 2.0 is 2.
    if (value.is_number_float() && core::whole_number(value.get<double>())) {
      out.emplace_back(name, *core::whole_number(value.get<double>()));
      continue;
    }
    const bool number = value.is_number_integer() && (!value.is_number_unsigned() ||
                                                     value.get<std::uint64_t>() <= std::uint64_t(INT64_MAX));
    if (!number && !value.is_string() && !value.is_boolean())
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: its problem's field {} is {}, not a whole number, a string or a switch", what,
                                    cpp_string(name), comment_text(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 40))));
    out.emplace_back(name, nlohmann::json::parse(value.dump()));  // ordered_json to json, by value
  }
  return out;
}

namespace {

// How far tuned problem `e` is from `s` as the header's lookup measures it: infinity unless
// both are of one op with the same fields and the same text and switches; else the product of
// the numbers' size ratios (1 for the same problem).
double problem_distance(const ProblemFields& e, const ProblemFields& s, const std::vector<std::string>& exact) {
  if (e.size() != s.size()) return HUGE_VAL;
  double d = 1;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i].first != s[i].first) return HUGE_VAL;
    const bool matched_exactly = std::find(exact.begin(), exact.end(), e[i].first) != exact.end();
    if (!matched_exactly && e[i].second.is_number_integer() && s[i].second.is_number_integer()) {
      const double a = e[i].second.get<double>(), b = s[i].second.get<double>();
      d *= a > b ? a / b : b / a;
    } else if (e[i].second != s[i].second) {
      return HUGE_VAL;
    }
  }
  return d;
}

}  // namespace

std::vector<Coverage> coverage(const SuiteShapes& suite, const std::vector<TrialRow>& entries) {
  std::vector<Coverage> out;
  for (const ProblemRecord& s : suite.shapes) {
    // No match: the header's lookup returns nullptr. A config tuned for other dtypes, another
    // layout or another head dim may not even build there (battery round 19, F27: a matmul's
    // lookup returned its table's first entry, a config of other dtypes).
    Coverage c{s.key, "none", "", 0};
    const ProblemFields want = problem_fields(s, fmt::format("suite shape {}", comment_text(s.key)));
    double best = 1e300;
    for (const TrialRow& e : entries) {
      if (e.problem.kernel != s.kernel) continue;
      const double d = problem_distance(problem_fields(e.problem, fmt::format("trial {}", e.id)), want, suite.exact_fields);
      if (d < best) {
        best = d;
        c = {s.key, e.problem.key == s.key ? "exact" : "nearest", e.problem.key, d};
      }
    }
    out.push_back(c);
  }
  return out;
}

int export_json(Store& store, const std::string& folder, bool include_model, const std::vector<TemplateId>& current,
                const SuiteShapes& suite, std::vector<std::string>* files_written, bool require_verified_rows) {
  std::vector<std::string> written;
  if (folder.empty()) throw core::Error(core::ErrorKind::InvalidInput, "the output path is empty");
  refuse_inputs(folder, store, suite);
  std::error_code ec;
  if (std::filesystem::exists(folder, ec) && !std::filesystem::is_directory(folder, ec))
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("{} is a file, but --format json writes a folder (one file per device and "
                                  "template): give a folder path", folder));
  VerifiedBest best = verified_best(store, include_model, current);
  if (require_verified_rows) require_verified(best);  // before the folder is made
  NewFolderGuard made(folder);
  std::filesystem::create_directories(folder, ec);
  // The disk's failure (no space or inode: round 20, F59) is exit 1, as every writer says it;
  // a path that cannot be a folder is the user's.
  if (ec)
    throw core::Error(environment_errno(ec.value()) ? core::ErrorKind::IO : core::ErrorKind::InvalidInput,
                      fmt::format("cannot create the folder {}: {}", folder, ec.message()));
  std::map<std::string, nlohmann::json> files;         // file name -> document
  std::map<std::string, std::vector<TrialRow>> rows_of;  // file name -> its entries
  int n = 0;
  // One file per device and template version: two versions of one template on one device
  // (--all-versions) each get their own, named by source hash (one file took both, under one
  // version's hash, and kept one entry of two: round 13, F5).
  // Every part of a name is a slug, so a file never lands outside the folder (a template named
  // "../x" in an imported row did: battery round 14, F1); two things one name would hold are
  // refused rather than one written over the other.
  std::map<std::string, std::set<std::string>> versions;  // device__template -> source hashes
  for (const LabelledRow& lr : best.rows)
    versions[fmt::format("{}__{}", slug(lr.row.env.device_name), slug(lr.row.tmpl.name))].insert(lr.row.tmpl.source_hash);
  std::map<std::string, std::string> holds;  // file name -> the device, template and version it holds
  for (const LabelledRow& lr : best.rows) {
    const TrialRow& t = lr.row;
    const std::string stem = fmt::format("{}__{}", slug(t.env.device_name), slug(t.tmpl.name));
    std::string name = versions[stem].size() > 1 ? fmt::format("{}__{}.json", stem, slug(t.tmpl.source_hash))
                                                 : stem + ".json";
    const std::string what = fmt::format("{} of {} (version {})", t.tmpl.name, t.env.device_name, t.tmpl.source_hash);
    if (auto [it, fresh] = holds.emplace(name, what); !fresh && it->second != what)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("the entries of {} and of {} would be written to one file, {}: export them with "
                                    "--format cpp or csv, or from databases of one each", it->second, what, name));
    rows_of[name].push_back(t);
    nlohmann::json& doc = files[name];
    if (doc.is_null())
      doc = {{"template", t.tmpl.name}, {"source_hash", t.tmpl.source_hash}, {"backend_hash", t.tmpl.backend_hash},
             {"device", t.env.device_name}, {"arch", t.env.arch}, {"entries", nlohmann::json::object()}};
    doc["entries"][t.problem.key] = {
        {"problem", problem_json(t.problem)},
        {"config", nlohmann::json::parse(t.config_json)},
        {"median_ms", *t.median_ms},
        {"tflops", tflops(t)},
        {"noise", t.noise.value_or(0)},
        {"samples", t.samples_ms.size()},
        {"verification_error", t.verification_error ? nlohmann::json(*t.verification_error) : nlohmann::json(nullptr)},
        {"source", t.source},
        {"verification", lr.verification},
        {"provenance", {{"trial", t.uuid}, {"measured_at", t.created_at}, {"driver", t.env.driver_version},
                        {"cuda", t.env.cuda_version}, {"sm_count", t.env.sm_count}}}};
    ++n;
  }
  if (!suite.shapes.empty()) {
    for (auto& [name, doc] : files) {
      // A suite is one op's shapes: it covers that op's files only.
      if (rows_of[name].empty() || rows_of[name].front().problem.kernel != suite.shapes.front().kernel) continue;
      nlohmann::json shapes = nlohmann::json::object();
      for (const Coverage& c : coverage(suite, rows_of[name]))
        shapes[c.shape] = {{"how", c.how}, {"entry", c.entry}, {"size_ratio", c.size_ratio}};
      std::string exact;
      for (const std::string& f : suite.exact_fields) exact += ", " + f;
      doc["coverage"] = {{"suite", suite.name},
                         {"lookup", fmt::format("exact problem key, else the nearest tuned problem of the same text "
                                                "fields and switches{} (smallest product of the other numbers' size "
                                                "ratios), else none",
                                                exact.empty() ? "" : " and the same" + exact.substr(1))},
                         {"shapes", shapes}};
    }
  }
  // Every file is checked before the first is written: a refusal writes nothing.
  for (auto& [name, doc] : files) refuse_inputs((std::filesystem::path(folder) / name).string(), store, suite);
  for (auto& [name, doc] : files) {
    std::string file = (std::filesystem::path(folder) / name).string();
    made.will_write(file);
    write_file_atomically(file, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    written.push_back(file);
  }
  made.keep();
  if (files_written) *files_written = std::move(written);
  return n;
}

nlohmann::json problem_json(const ProblemRecord& p) {
  if (p.kernel == "matmul")
    return {{"m", p.m}, {"n", p.n}, {"k", p.k}, {"dtype", p.dtype}, {"out_dtype", p.out_dtype}, {"layout", p.layout}};
  // Another op: its own fields (schema 8), in its order, after the op's name.
  nlohmann::json j = {{"op", p.kernel}};
  const nlohmann::json fields = nlohmann::json::parse(p.fields, nullptr, false);
  if (fields.is_object() && !fields.empty())  // (an imported landscape's problem has none)
    for (auto& [name, value] : problem_fields(p, "problem " + p.key.substr(0, 80))) j[name] = std::move(value);
  return j;
}

int export_csv(Store& store, const std::string& csv_path, bool include_model) {
  refuse_database_path(csv_path, {store.path()});
  std::ostringstream out;
  out << "trial,run,created_at,template,source_hash,problem,m,n,k,dtype,out_dtype,layout,op,problem_fields,device,arch,"
         "driver,cuda,"
         "config,status,source,median_ms,min_ms,mean_ms,noise,samples,verification_error,throttled,compile_ms,"
         "registers,smem_bytes,spill_bytes,message,verification\n";
  int n = 0;
  std::map<std::string, std::string> label_of;  // a failing key is labelled "failed" on each of its rows
  for (const TrialRow& t : store.trials()) {
    if (t.source != "cuda" && !include_model) continue;
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", t.config_json, t.kernel_hash, t.problem_class,
                                  t.source == "cuda" && t.status == "ok" && t.verification_error);
    auto label = label_of.find(key);
    if (label == label_of.end()) label = label_of.emplace(key, verification_of(store, t)).first;
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       t.uuid, t.run_id, t.created_at, t.tmpl.name, t.tmpl.source_hash, t.problem.key, t.problem.m,
                       t.problem.n, t.problem.k, t.problem.dtype, t.problem.out_dtype, t.problem.layout,
                       t.problem.kernel, csv_field(t.problem.fields), csv_field(t.env.device_name), t.env.arch, t.env.driver_version, t.env.cuda_version,
                       // an ok row's config whole, as best and the json export give it (stored_config.h)
                       csv_field(t.status == "ok" ? stored_config(store.path(), t).to_json() : t.config_json), t.status,
                       t.source, opt_str(t.median_ms), opt_str(t.min_ms),
                       opt_str(t.mean_ms), opt_str(t.noise), t.samples_ms.size(), opt_str(t.verification_error),
                       t.throttled ? 1 : 0, opt_str(t.compile_ms), opt_str(t.registers), opt_str(t.smem_bytes),
                       opt_str(t.spill_bytes), csv_field(t.message), label->second);
    ++n;
  }
  write_file_atomically(csv_path, out.str());
  return n;
}

int export_cpp(Store& store, const std::string& header_path, bool include_model, const std::vector<TemplateId>& current,
               const SuiteShapes& suite, const std::vector<DeclaredTemplate>& declared, bool require_verified_rows) {
  refuse_inputs(header_path, store, suite);
  VerifiedBest best = verified_best(store, include_model, current);
  // Only templates the header can declare: with `declared` given, a row of any other template
  // (an imported landscape: its parameters are another tool's) is left out, with a note.
  std::map<std::string, int> left_out;  // template -> rows
  if (!declared.empty()) {
    std::set<std::string> ours;
    for (const DeclaredTemplate& d : declared) ours.insert(d.name);
    std::vector<LabelledRow> kept;
    for (LabelledRow& t : best.rows) {
      if (ours.count(t.row.tmpl.name)) kept.push_back(std::move(t));
      else ++left_out[t.row.tmpl.name];
    }
    if (kept.empty() && !left_out.empty()) {
      std::string names;
      for (const auto& [name, rows] : left_out) names += fmt::format("{}{} ({} rows)", names.empty() ? "" : ", ", name, rows);
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{} holds no results of a template the C++ header declares, only of {}: those "
                                    "are landscapes of other kernels (export them with --format json, csv or t4); "
                                    "nothing was written", store.path(), names));
    }
    best.rows = std::move(kept);
  }
  if (require_verified_rows) require_verified(best);
  // Group winners by (template, arch); a struct per template from its config's keys.
  std::map<std::string, std::map<std::string, std::vector<LabelledRow>>> by_template;  // template -> arch -> rows
  for (LabelledRow& t : best.rows)
    by_template[t.row.tmpl.name][t.row.env.arch].push_back(std::move(t));
  // One problem tuned by two versions (--all-versions) or devices: the lookup takes the first of
  // a tie, so the newest trial comes first (round 13, F5: the stale version's config was served).
  for (auto& [tmpl, by_arch] : by_template)
    for (auto& [arch, rows] : by_arch)
      std::stable_sort(rows.begin(), rows.end(), [](const LabelledRow& a, const LabelledRow& b) {
        return a.row.problem.key != b.row.problem.key ? a.row.problem.key < b.row.problem.key
                                                      : a.row.created_at > b.row.created_at;
      });
  // Every declared template gets its struct and lookup even with nothing tuned, so code that
  // calls the lookup compiles whatever the database holds. The struct's members are those of
  // the template's first row (the declared sample's when it has none), and every row must have
  // exactly them. So with the problems: one struct per op, of its first problem's fields.
  std::map<std::string, Schema> schema;  // template -> parameter -> type
  std::map<std::string, std::string> op_of;  // template -> op
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> problem_schema;  // op -> field, type
  auto fields_schema = [](const ProblemFields& fields, const std::string& what) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, value] : fields) {
      if (!member_name(name))
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("{}: problem field {} cannot be a C++ member name", what, cpp_string(name)));
      out.emplace_back(name, value.is_boolean() ? "bool" : value.is_string() ? "string" : "int");
    }
    return out;
  };
  std::map<std::string, std::set<std::string>> exact_of;  // op -> numeric fields matched exactly
  for (const DeclaredTemplate& d : declared) {
    schema[d.name] = schema_of(nlohmann::json::parse(d.sample_config_json), d.name);
    op_of[d.name] = d.sample_problem.kernel;
    exact_of[d.sample_problem.kernel].insert(d.exact_fields.begin(), d.exact_fields.end());
    problem_schema.emplace(d.sample_problem.kernel, fields_schema(problem_fields(d.sample_problem, d.name), d.name));
  }
  for (auto& [tmpl, by_arch] : by_template) {
    const TrialRow& r = by_arch.begin()->second.front().row;
    const std::string what = fmt::format("{} is damaged: trial {}", store.path(), r.id);
    schema[tmpl] = schema_of(config_of(r, store.path()), what);
    op_of[tmpl] = r.problem.kernel;
    problem_schema.emplace(r.problem.kernel, fields_schema(problem_fields(r.problem, what), what));
  }
  // Every row must fit its template's struct, or the header would not compile: a row that does
  // not was written behind the tool's back.
  std::map<std::string, std::string> slugs;  // slug -> what it names: two names, one identifier
  auto claim = [&](const std::string& id, const std::string& name) {
    auto [it, fresh] = slugs.emplace(id, name);
    if (!fresh && it->second != name)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: {} and {} would both be named {} in the C++ header", store.path(),
                                    cpp_string(it->second), cpp_string(name), id));
  };
  for (auto& [tmpl, types] : schema) claim("t:" + slug(tmpl), tmpl);
  for (auto& [op, fields] : problem_schema) claim("o:" + slug(op), op);
  auto problem_type = [](const std::string& op) { return op == "matmul" ? std::string("Shape") : "Problem_" + slug(op); };
  std::map<std::string, std::vector<ProblemFields>> problems_of;  // template/arch -> its rows' problems
  for (auto& [tmpl, by_arch] : by_template)
    for (auto& [arch, rows] : by_arch) {
      claim(fmt::format("a:{}:{}", slug(tmpl), arch_namespace(arch)), arch);
      for (const LabelledRow& lr : rows) {
        const TrialRow& r = lr.row;
        std::string what = fmt::format("{} is damaged: trial {}", store.path(), r.id);
        nlohmann::json c = config_of(r, store.path());
        Schema got = schema_of(c, what);
        if (got != schema[tmpl]) {
          std::string want, have;
          for (auto& [k, t] : schema[tmpl]) want += fmt::format("{}{} ({})", want.empty() ? "" : ", ", k, t);
          for (auto& [k, t] : got) have += fmt::format("{}{} ({})", have.empty() ? "" : ", ", k, t);
          throw core::Error(core::ErrorKind::InvalidInput,
                            fmt::format("{}: trial {} cannot be exported to C++: its config has {} where {}'s other "
                                        "rows have {} (a damaged row, or one of another version of the template)",
                                        store.path(), r.id, have.empty() ? "nothing" : have, tmpl, want));
        }
        const auto& want_problem = problem_schema.at(op_of[tmpl]);
        ProblemFields fields = problem_fields(r.problem, what);
        if (r.problem.kernel != op_of[tmpl] || fields_schema(fields, what) != want_problem) {
          std::string want, have;
          for (auto& [k, t] : want_problem) want += fmt::format("{}{} ({})", want.empty() ? "" : ", ", k, t);
          for (auto& [k, t] : fields_schema(fields, what)) have += fmt::format("{}{} ({})", have.empty() ? "" : ", ", k, t);
          throw core::Error(core::ErrorKind::InvalidInput,
                            fmt::format("{}: trial {} cannot be exported to C++: its {} problem has {} where {}'s "
                                        "problems have {} (a damaged row)", store.path(), r.id,
                                        comment_text(r.problem.kernel), have, op_of[tmpl], want));
        }
        problems_of[tmpl + "\n" + arch].push_back(std::move(fields));
      }
    }
  std::ostringstream out;
  out << "// Generated by mgpu-tune export --format cpp: tuned configs per arch, keyed by problem.\n"
         "// lookup_<template>(arch, problem): the exact problem's config if tuned, else the nearest tuned\n"
         "// problem of the same text fields and switches (a matmul's dtypes and layout; smallest product of\n"
         "// the size ratios of the numbers: M, N, K); nullptr (not found) when none was tuned for the arch:\n"
         "// a config of other dtypes, another layout or (attention) another head dim may not build there.\n"
         "// Numbers that shape the kernel (attention's head_dim) match exactly, as the text fields do.\n"
         "// A matmul's problem is Shape, another op's Problem_<op>.\n"
         "// Self-contained: C++17, no dependencies.\n"
         "#pragma once\n#include <array>\n#include <cstdint>\n#include <string_view>\n\nnamespace mgpu_tuned {\n";
  for (auto& [op, fields] : problem_schema) {
    out << "\n// The " << comment_text(op) << " problem.\nstruct " << problem_type(op) << " {\n";
    for (auto& [k, t] : fields)
      out << "  " << (t == "string" ? "std::string_view " : t == "bool" ? "bool " : "std::int64_t ") << k << ";\n";
    out << "};\n";
  }
  out << "\nconstexpr double ratio_distance(std::int64_t a, std::int64_t b) {\n"
         "  return a > b ? double(a) / double(b) : double(b) / double(a);\n}\n";
  int n = 0;
  static const std::map<std::string, std::vector<LabelledRow>> kNoRows;
  if (!left_out.empty()) {
    out << "\n// Left out: rows of templates this header cannot declare (imported landscapes of other kernels;\n"
           "// export them with --format json, csv or t4):\n";
    for (const auto& [name, rows] : left_out) out << "//   " << comment_text(name) << ": " << rows << " rows\n";
  }
  auto cpp_value = [](const nlohmann::json& v) {
    return v.is_string()            ? cpp_string(v.get<std::string>())
           : v.is_boolean()         ? std::string(v.get<bool>() ? "true" : "false")
           : v.is_number_unsigned() ? fmt::format("{}", v.get<std::uint64_t>())
                                    : fmt::format("{}", v.get<std::int64_t>());
  };
  for (auto& [tmpl, fields] : schema) {
    auto found = by_template.find(tmpl);
    const auto& by_arch = found == by_template.end() ? kNoRows : found->second;
    const std::string op = op_of[tmpl];
    const auto& problem = problem_schema.at(op);
    std::string type = "Config_" + slug(tmpl);
    out << "\nstruct " << type << " {\n";
    for (auto& [k, t] : fields) out << "  " << (t == "string" ? "std::string_view " : "std::int64_t ") << k << ";\n";
    out << "  double median_ms;  // as measured (" << (include_model ? "or predicted" : "cuda, verified") << ")\n"
        << "  std::string_view verification;  // hardware (GPU vs cuBLAS), virtual (virtual device) or none\n};\n";
    out << "struct Entry_" << slug(tmpl) << " {\n  " << problem_type(op) << " shape;\n  " << type << " config;\n};\n";
    for (auto& [arch, rows] : by_arch) {
      out << "\nnamespace " << arch_namespace(arch) << " {\ninline constexpr std::array<Entry_" << slug(tmpl) << ", " << rows.size()
          << "> k_" << slug(tmpl) << " = {{\n";
      std::vector<TrialRow> plain;
      const std::vector<ProblemFields>& problems = problems_of[tmpl + "\n" + arch];
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const TrialRow& r = rows[i].row;
        plain.push_back(r);
        std::string shape, config;
        for (const auto& [k, v] : problems[i]) shape += fmt::format("{}{}", shape.empty() ? "" : ", ", cpp_value(v));
        const nlohmann::json c = config_of(r, store.path());
        for (auto& [k, v] : c.items())  // checked above: a string, or an integer of int64's range
          config += cpp_value(v) + ", ";
        out << fmt::format("    {{{{{}}}, {{{}{}, {}}}}},\n", shape, config, *r.median_ms, cpp_string(rows[i].verification));
        ++n;
      }
      out << "}};\n}  // namespace " << slug(arch) << "\n";
      if (!suite.shapes.empty() && suite.shapes.front().kernel == op) {
        out << "// Coverage of suite " << comment_text(suite.name) << " (" << suite.shapes.size() << " shapes) on "
            << comment_text(arch) << ":\n";
        for (const Coverage& c : coverage(suite, plain))
          out << fmt::format("//   {:<36} {}\n", comment_text(c.shape),
                             comment_text(c.how == "exact"     ? std::string("exact")
                                          : c.how == "nearest" ? fmt::format("nearest: {} (size ratio {:.2f})", c.entry, c.size_ratio)
                                                               : std::string("none: nullptr (no tuned problem of its text and kernel fields)")));
      }
    }
    // The nearest-problem rule, spelled out for the op's fields.
    std::string same, distance;
    for (const auto& [k, t] : problem) {
      if (t == "int" && !exact_of[op].count(k)) distance += fmt::format(" * ratio_distance(e.shape.{0}, s.{0})", k);
      else same += fmt::format("{0}e.shape.{1} != s.{1}", same.empty() ? "" : " || ", k);
    }
    out << "\n// nullptr when nothing was tuned for this arch" << (by_arch.empty() ? " (nothing was tuned at all)" : "")
        << ".\nconstexpr const " << type << "* lookup_" << slug(tmpl)
        << "([[maybe_unused]] std::string_view arch, [[maybe_unused]] " << problem_type(op) << " s) {\n";
    for (auto& [arch, rows] : by_arch) {
      out << "  if (arch == " << cpp_string(arch) << ") {\n    const auto& table = " << arch_namespace(arch) << "::k_" << slug(tmpl)
          << ";\n    const " << type << "* best = nullptr;\n    double best_d = 1e300;\n"
          << "    for (const auto& e : table) {\n";
      if (!same.empty()) out << "      if (" << same << ") continue;\n";
      out << "      double d = 1.0" << distance << ";\n"
          << "      if (d < best_d) { best_d = d; best = &e.config; }\n    }\n    return best;\n  }\n";
    }
    out << "  return nullptr;\n}\n";
  }
  out << "\n}  // namespace mgpu_tuned\n";
  write_file_atomically(header_path, out.str());
  return n;
}

}  // namespace mgpu::results
