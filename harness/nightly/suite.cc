#include "harness/nightly/suite.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/current_templates.h"
#include "results/store.h"
#include "results/verified_best.h"

namespace mgpu::harness {
namespace {

using core::Error;
using core::ErrorKind;

std::vector<SuiteEntry> ordered(std::map<std::string, SuiteEntry> by_name) {
  std::vector<SuiteEntry> out;
  for (auto& [name, e] : by_name) out.push_back(std::move(e));
  return out;
}

kernels::MatmulProblem problem_of(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& dtype,
                                  const std::string& out_dtype, const std::string& layout) {
  kernels::MatmulProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.in_dtype = kernels::parse_dtype(dtype);
  p.out_dtype = kernels::parse_dtype(out_dtype);
  p.b_layout = kernels::parse_b_layout(layout);
  kernels::validate(p);
  return p;
}

void add(std::map<std::string, SuiteEntry>& by_name, SuiteEntry e) {
  e.name = e.template_name + "/" + e.problem.key();
  by_name.emplace(e.name, std::move(e));  // first one wins: one entry per (template, problem)
}

void read_export_file(const std::filesystem::path& file, std::map<std::string, SuiteEntry>& by_name) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::InvalidInput, fmt::format("cannot read {}", file.string()));
  try {
    nlohmann::json doc = nlohmann::json::parse(in);
    for (auto& [key, entry] : doc.at("entries").items()) {
      const nlohmann::json& p = entry.at("problem");
      SuiteEntry e;
      e.template_name = doc.at("template").get<std::string>();
      e.arch = doc.at("arch").get<std::string>();
      e.tuned_on = doc.value("device", "");
      e.verification = entry.value("verification", "none");  // exports before issue 17 carry none
      e.problem = problem_of(p.at("m"), p.at("n"), p.at("k"), p.at("dtype"), p.at("out_dtype"), p.at("layout"));
      e.config = core::TuningConfig::from_json(entry.at("config").dump());
      add(by_name, std::move(e));
    }
  } catch (const nlohmann::json::exception& x) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not an mgpu-tune JSON export: {}", file.string(), x.what()));
  } catch (const Error& x) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{}: {}", file.string(), x.what()));
  }
}

}  // namespace

std::vector<SuiteEntry> suite_from_database(const std::string& db_path, bool include_model, std::string* skipped_note) {
  results::Store store = results::Store::open(db_path, results::OpenMode::ReadOnly);
  std::map<std::string, SuiteEntry> by_name;
  results::VerifiedBest best = results::verified_best(store, include_model, current_templates());
  if (skipped_note) *skipped_note = results::skipped_note(store, best.failed);
  for (const auto& [t, verification] : best.rows) {
    SuiteEntry e;
    e.verification = verification;
    e.template_name = t.tmpl.name;
    e.arch = t.env.arch;
    e.tuned_on = t.env.device_name;
    e.problem = problem_of(t.problem.m, t.problem.n, t.problem.k, t.problem.dtype, t.problem.out_dtype, t.problem.layout);
    e.config = core::TuningConfig::from_json(t.config_json);
    add(by_name, std::move(e));
  }
  return ordered(std::move(by_name));
}

std::vector<SuiteEntry> suite_from_export(const std::string& path) {
  namespace fs = std::filesystem;
  std::map<std::string, SuiteEntry> by_name;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(path))
      if (f.path().extension() == ".json") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("{} holds no .json export files", path));
    for (const fs::path& f : files) read_export_file(f, by_name);
  } else {
    read_export_file(path, by_name);
  }
  return ordered(std::move(by_name));
}

}  // namespace mgpu::harness
