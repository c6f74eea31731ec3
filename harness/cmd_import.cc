#include "harness/cmd_import.h"

#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/version.h"
#include "results/database.h"
#include "results/t4_format.h"
#include "results/t4_store.h"

namespace mgpu::harness {

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
  cmd->callback([o] {
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
    results::Store store = results::Store::open(o->db, results::OpenMode::ReadWrite);
    int n = results::import_t4(store, file, as);
    if (o->json)
      std::cout << nlohmann::json{{"db", o->db}, {"t4", o->t4}, {"trials", n}, {"kernel", as.kernel},
                                  {"problem", as.problem}, {"device", as.device}, {"source", "imported"}}
                       .dump(2)
                << "\n";
    else
      fmt::print("imported {} trials of {} on {} into {}\n", n, as.kernel, as.device, o->db);
  });
}

}  // namespace mgpu::harness
