#include "harness/cmd_import.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/error.h"
#include "harness/cli.h"
#include "harness/measure/trial_record.h"
#include "harness/stop_signals.h"
#include "harness/version.h"
#include "kernels/matmul_problem.h"
#include "kernels/matmul_template.h"
#include "kernels/op_registry.h"
#include "results/database.h"
#include "results/t4_format.h"
#include "results/t4_store.h"

namespace mgpu::harness {
namespace {

// The template of that name this binary builds, or nullptr: any other kernel name is a
// landscape of another tool, whose parameters are its own.
const kernels::MatmulTemplate* our_template(const std::string& name) {
  for (const core::ArchSpec& arch : core::all_archs()) {
    try {
      const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
      if (t.name() == name) return &t;
    } catch (const core::Error&) {
      // no template for this arch yet
    }
  }
  return nullptr;
}

// Results filed under one of our templates are read as its configs (best, export, warm
// starts): each must be one, with exactly its parameters, that its rules accept at the problem
// (names and types alone let tile_m -5 or 7 through).
void check_configs(const kernels::MatmulTemplate& t, const kernels::MatmulProblem& problem, const results::T4File& file,
                   const std::string& path) {
  const core::ParamSpace space = t.space();
  for (size_t i = 0; i < file.results.size(); ++i) {
    const core::TuningConfig& c = file.results[i].config;
    std::string where = fmt::format("T4 file {}, result {}", path, i);
    for (const auto& [name, value] : c.values()) {
      bool known = false;
      for (const core::Param& p : space.params()) known = known || p.name == name;
      if (!known)
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("{}: parameter '{}' is not one of {}'s: the file is not a landscape of that "
                                      "template (leave --kernel out to import it as its own kernel)",
                                      where, name, t.name()));
    }
    try {
      t.require_valid(problem, c);
    } catch (const core::Error& e) {
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: not a config of {} at {}: {}", where, t.name(), problem.key(), e.what()));
    }
  }
}

// The op template of that name (attention_sm90), or nullptr.
const kernels::OpTemplate* our_op_template(const std::string& name) {
  for (const kernels::OpEntry& e : kernels::ops())
    for (const core::ArchSpec& arch : core::all_archs()) {
      try {
        const kernels::OpTemplate& t = e.for_arch(arch);
        if (t.name() == name) return &t;
      } catch (const core::Error&) {
        // the op has no template for this arch
      }
    }
  return nullptr;
}

// check_configs() for an op template: the problem is its key's (fields and flops stored with
// it, as the tuner stores them), and each config one the template's rules accept there.
results::ProblemRecord op_problem_for(const kernels::OpTemplate& t, const std::string& key, results::T4File& file,
                                      const std::string& path) {
  kernels::Problem p;
  try {
    p = t.problem_from_key(key);
  } catch (const core::Error& e) {
    if (e.kind() != core::ErrorKind::InvalidInput) throw;
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--problem {} is not a problem of {}: {}", key, t.name(), e.what()));
  }
  if (p.key != key)
    throw core::Error(core::ErrorKind::InvalidInput,
                      fmt::format("--problem {} is not a problem of {}: its canonical key is {}", key, t.name(), p.key));
  for (size_t i = 0; i < file.results.size(); ++i) {
    core::TuningConfig& c = file.results[i].config;
    const std::string where = fmt::format("T4 file {}, result {}", path, i);
    const core::ParamSpace space = t.space();
    for (const auto& [name, value] : c.values())
      if (std::none_of(space.params().begin(), space.params().end(),
                       [&](const core::Param& q) { return q.name == name; }))
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("{}: parameter '{}' is not one of {}'s: the file is not a landscape of that "
                                      "template (leave --kernel out to import it as its own kernel)",
                                      where, name, t.name()));
    // Parameters left out read as the template's defaults, as a stored config does; the config
    // is stored whole, so one kernel is one config of the study (and of every export).
    core::TuningConfig full = t.default_config();
    for (const auto& [name, value] : c.values()) full.set(name, value);
    try {
      t.require_valid(p, full);
    } catch (const core::Error& e) {
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("{}: not a config of {} at {}: {}", where, t.name(), key, e.what()));
    }
    c = full;
  }
  return problem_record(p);
}

// A problem key as MatmulProblem::key() writes it ("m4096_n4096_k4096_bf16_bf16_kn"), which
// the template must be able to run.
results::ProblemRecord problem_for(const kernels::MatmulTemplate& t, const std::string& key) {
  auto refuse = [&](const std::string& why) {
    return core::Error(core::ErrorKind::InvalidInput,
                       fmt::format("--problem {} is not a problem of {}: {}", key, t.name(), why));
  };
  kernels::MatmulProblem p;
  try {
    p = kernels::parse_matmul_key(key);
    t.check_problem(p);
  } catch (const core::Error& e) {
    throw refuse(e.what());
  }
  if (p.key() != key) throw refuse(fmt::format("its canonical key is {}", p.key()));
  return problem_record(p);
}

}  // namespace

void add_import_command(CLI::App& app) {
  struct O {
    std::string t4, db, kernel, problem = "t4", device;
    bool json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("import", "Store another tool's results (a T4 file) as imported trials");
  cmd->add_option("--t4", o->t4, "T4 tuning-results file (.json or .json.gz)")->required();
  cmd->add_option("--db", o->db, "Results database (created if missing)")->required();
  cmd->add_option("--kernel", o->kernel, "Kernel (template) name (default: the file name up to its first '_')");
  cmd->add_option("--problem", o->problem, "Problem key the results belong to (default: t4)");
  cmd->add_option("--device", o->device, "Device the results were measured on (default: from the file name)");
  cmd->add_flag("--json", o->json, "Print a JSON object describing what was stored");
  // One transaction: a stop rolls it back at the next result (nothing of the import is kept).
  cmd->callback([o] {
    install_stop_handlers();
    auto stopped = [&](const char* when) {
      fmt::print(stderr, "mgpu-tune: stopped by SIG{} {}: nothing was imported\n", sigabbrev_np(stop_exit_code() - 128), when);
      throw ExitWith{stop_exit_code()};
    };
    std::string stem = std::filesystem::path(o->t4).filename().string();
    for (const char* ext : {".gz", ".json"})
      if (stem.size() > std::strlen(ext) && stem.compare(stem.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
        stem.resize(stem.size() - std::strlen(ext));
    if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, "_T4") == 0) stem.resize(stem.size() - 3);
    size_t cut = stem.find('_');
    results::T4Import as;
    as.kernel = !o->kernel.empty() ? o->kernel : stem.substr(0, cut);
    as.device = !o->device.empty() ? o->device : cut == std::string::npos ? stem : stem.substr(cut + 1);
    as.problem = o->problem;
    as.arguments = fmt::format("import --t4 {}", o->t4);
    as.tool_version = version_string();
    // The file and the names are checked before the database is opened: opening creates it.
    results::T4File file = results::read_t4(o->t4);
    results::check_t4_import(as);
    results::check_t4_results(file, o->t4);
    if (stop_requested()) stopped("while the file was read");
    const bool ours = our_template(as.kernel) || our_op_template(as.kernel);
    if (ours && o->problem == "t4")
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("--kernel {} is one of our templates: give the problem its results belong to with "
                                    "--problem KEY (e.g. {})",
                                    as.kernel, our_template(as.kernel) ? "m4096_n4096_k4096_bf16_bf16_kn"
                                                                       : our_op_template(as.kernel)->kernel_problems().front().key));
    if (const kernels::MatmulTemplate* t = our_template(as.kernel)) {
      as.shape = problem_for(*t, as.problem);
      as.arch = std::string(t->arch().name);
      check_configs(*t, matmul_problem(*as.shape), file, o->t4);
    } else if (const kernels::OpTemplate* ot = our_op_template(as.kernel)) {
      as.shape = op_problem_for(*ot, as.problem, file, o->t4);
      as.arch = std::string(ot->arch().name);
    }
    // A new database the import could not fill (a full disk, a stop) is not left behind.
    results::NewDatabaseGuard created(o->db);
    results::Store store = results::Store::open(o->db, results::OpenMode::ReadWrite);
    as.stop = &stop_requested();
    results::T4Imported n;
    try {
      n = results::import_t4(store, file, as);
    } catch (const results::T4ImportStopped&) {
      stopped("during the import, which was rolled back");
    }
    created.keep();
    if (o->json)
      std::cout << nlohmann::json{{"db", o->db}, {"t4", o->t4}, {"trials", n.written},
                                  {"already_there", n.already_there}, {"kernel", as.kernel},
                                  {"problem", as.problem}, {"device", as.device}, {"source", "imported"}}
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
    else
      fmt::print("imported {} trials of {} on {} into {}{}\n", n.written, as.kernel, as.device, o->db,
                 n.already_there ? fmt::format(" ({} already there, skipped)", n.already_there) : "");
    exit_if_stopped("the import had been committed first");  // a stop after the commit
  });
}

}  // namespace mgpu::harness
