#include "harness/nightly/suite.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/input_file.h"
#include "core/json_input.h"
#include "core/arch.h"
#include "harness/current_templates.h"
#include "harness/measure/trial_record.h"
#include "kernels/matmul_template.h"
#include "kernels/op_registry.h"
#include "results/export.h"
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

// Another op's problem, rebuilt from its key by the op's template (Error{InvalidInput} for an op
// or target the binary has no template for, or a key the op does not read).
kernels::Problem op_problem(const std::string& op, const std::string& arch, const std::string& key) {
  return kernels::op_template(op, core::parse_arch(arch)).problem_from_key(key);
}

// The problem and config checks speak to the command line ("--m must be between ..."); a value
// read from a file is no flag the user gave, so the message loses the dashes and gains `where`.
[[noreturn]] void bad_stored_value(const std::string& where, const Error& e) {
  std::string what = e.what();
  if (what.rfind("--", 0) == 0) what.erase(0, 2);
  throw Error(ErrorKind::InvalidInput, fmt::format("{}: {}", where, what));
}

// One entry per (template, problem): a measured config before a predicted one, then the device
// first by name (an export folder's files are read in name order; a file's name says nothing).
void add(std::map<std::string, SuiteEntry>& by_name, SuiteEntry e) {
  e.name = e.template_name + "/" + e.problem.key;
  auto [it, fresh] = by_name.emplace(e.name, e);
  if (!fresh && std::make_pair(!e.measured, e.tuned_on) < std::make_pair(!it->second.measured, it->second.tuned_on))
    it->second = std::move(e);
}

void read_export_file(const std::filesystem::path& file, std::map<std::string, SuiteEntry>& by_name) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::status(file, ec)))
    throw Error(ErrorKind::InvalidInput, fmt::format("cannot read {}: it does not exist", file.string()));
  // The export is read to its end: a FIFO would wait for a writer forever and /dev/zero never
  // ends, so anything but a regular file (of a sane size) is refused by name first.
  const std::string text = core::read_input_file(file.string(), "--configs export");
  try {
    nlohmann::json doc = core::parse_user_json(text, "");  // a hand-edited entry's key given twice is refused
    for (auto& [key, entry] : doc.at("entries").items()) {
      const nlohmann::json& p = entry.at("problem");
      SuiteEntry e;
      e.template_name = doc.at("template").get<std::string>();
      e.arch = doc.at("arch").get<std::string>();
      e.tuned_on = doc.value("device", "");
      e.verification = entry.value("verification", "none");  // exports before issue 17 carry none
      e.measured = entry.value("source", "") == "cuda";
      try {
        e.config = core::TuningConfig::from_json(entry.at("config").dump());
        // A config that cannot work -- a field missing or out of range, a rule broken -- is
        // the file's fault, said before anything runs: not a benchmark that "failed".
        const std::string op = p.value("op", "matmul");
        // The file's template is what its entries are benchmarked as: it must be the one the op
        // has for the arch (a name the file states, never only a label).
        const std::string built = op == "matmul" ? std::string(kernels::matmul_template(core::parse_arch(e.arch)).name())
                                                 : std::string(kernels::op_template(op, core::parse_arch(e.arch)).name());
        if (e.template_name != built)
          throw Error(ErrorKind::InvalidInput, fmt::format("the file's template '{}' is not the {} template of {} ({})",
                                                           e.template_name.substr(0, 40), op, e.arch, built));
        if (op == "matmul") {
          const kernels::MatmulProblem mp =
              problem_of(p.at("m"), p.at("n"), p.at("k"), p.at("dtype"), p.at("out_dtype"), p.at("layout"));
          const kernels::MatmulTemplate& t = kernels::matmul_template(core::parse_arch(e.arch));
          t.check_problem(mp);
          t.require_valid(mp, e.config);
          e.problem = problem_record(mp);
        } else {
          const kernels::Problem op_p = op_problem(op, e.arch, key);
          e.problem = problem_record(op_p);
          // The entry's fields are its key's: a hand edit of one without the other would
          // benchmark a problem the file does not show.
          if (results::problem_json(e.problem) != p)
            throw Error(ErrorKind::InvalidInput, fmt::format("its problem {} is not the one its key names ({})",
                                                             p.dump(), results::problem_json(e.problem).dump()));
          kernels::op_template(op, core::parse_arch(e.arch)).require_valid(op_p, e.config);
        }
      } catch (const Error& x) {
        bad_stored_value(fmt::format("entry '{}'", key), x);
      }
      add(by_name, std::move(e));
    }
  } catch (const nlohmann::json::exception& x) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{} is not an mgpu-tune JSON export: {}", file.string(), core::json_error_text(x)));
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
    e.measured = t.source == "cuda";
    try {
      e.problem = t.problem.kernel == "matmul"
                      ? problem_record(problem_of(t.problem.m, t.problem.n, t.problem.k, t.problem.dtype,
                                                  t.problem.out_dtype, t.problem.layout))
                      : problem_record(op_problem(t.problem.kernel, t.env.arch, t.problem.key));
      e.config = core::TuningConfig::from_json(t.config_json);
    } catch (const Error& x) {
      bad_stored_value(fmt::format("{}: stored trial {} (run {}, {} on {}, problem '{}') holds a bad value", db_path,
                                   t.id, t.run_id, t.tmpl.name, t.env.arch, t.problem.key), x);
    }
    add(by_name, std::move(e));
  }
  return ordered(std::move(by_name));
}

NoSuite why_no_suite(const std::string& db_path, bool include_model) {
  results::Store store = results::Store::open(db_path, results::OpenMode::ReadOnly);
  const bool measured_earlier = !store.best(false, {}).empty();  // every template version
  const bool predicted_current = !include_model && !store.best(true, current_templates()).empty();
  if (measured_earlier && predicted_current)
    return {fmt::format("{} holds measured configs only of earlier template versions (mgpu-tune best --all-versions "
                        "shows them) and only predictions of the current ones: tune on a GPU with this build, or pass "
                        "--include-model to run the predicted ones", db_path)};
  if (measured_earlier)
    return {fmt::format("{} holds measured configs only of earlier template versions (mgpu-tune best --all-versions "
                        "shows them): tune again with this build", db_path)};
  if (predicted_current)
    return {fmt::format("{} holds only predicted (model) results, no config measured on a GPU (tune on a GPU first, "
                        "or pass --include-model)", db_path), true};
  return {fmt::format("{} holds no verified config of the current templates{} (tune first)", db_path,
                      include_model ? ", measured or predicted" : "")};
}

std::vector<std::string> export_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  fs::directory_iterator it(path, ec), end;
  for (; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") files.push_back(it->path().string());
  if (ec) throw Error(ErrorKind::InvalidInput, fmt::format("cannot list the --configs folder {}: {}", path, ec.message()));
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error(ErrorKind::InvalidInput, fmt::format("{} holds no .json export files", path));
  return files;
}

std::vector<SuiteEntry> suite_from_export(const std::string& path) {
  std::map<std::string, SuiteEntry> by_name;
  for (const std::string& f : export_files(path)) read_export_file(f, by_name);
  return ordered(std::move(by_name));
}

}  // namespace mgpu::harness
