#include "harness/report/cmd_report.h"

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <memory>

#include <stdlib.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/cli.h"
#include "harness/report/report_data.h"
#include "harness/report/report_py.h"
#include "harness/stop_signals.h"
#include "results/database.h"
#include "results/output_file.h"
#include "search/python_runtime.h"

namespace mgpu::harness {
namespace {

// The files report.py writes into the output folder; none of them may be the database.
constexpr const char* kReportFiles[] = {"index.html", "convergence.png", "landscape.png", "importance.png",
                                        "history.png"};

// The one-line error for a render that report.py says the machine failed ({"failed": "memory"}
// or {"failed": "write", "errno": N, "why": "..."}): out of memory, or the folder `out` could not
// take the report -- a full disk, a quota or a file-size limit is the machine's (exit 1); a
// folder it may not write, the user's (exit 2).
core::Error render_failure(const nlohmann::json& failed, const std::string& out) {
  if (failed.value("failed", "") == "memory") return core::Error(core::ErrorKind::IO, out_of_memory_message());
  const int err = failed.value("errno", 0);
  const std::string why = failed.value("why", "writing failed");
  if (err == ENOSPC || err == EDQUOT)
    return core::Error(core::ErrorKind::IO, fmt::format("the disk holding {} is full ({}): no report was written", out, why));
  if (err == EFBIG)
    return core::Error(core::ErrorKind::IO, fmt::format("cannot write the report in {}: {} (a file-size limit, ulimit "
                                                        "-f): no report was written", out, why));
  return core::Error(err == EIO ? core::ErrorKind::IO : core::ErrorKind::InvalidInput,
                     fmt::format("cannot write the report in {}: {}: no report was written", out, why));
}

}  // namespace

void add_report_command(CLI::App& app) {
  struct O {
    std::string db, out = "mgpu-report";
    bool json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("report", "Write an HTML report with pictures of a results database");
  cmd->add_option("--db", o->db, "Results database (read only)")->required();
  cmd->add_option("-o,--output", o->out, "Folder for index.html and its pictures")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print a JSON object describing what was written");
  cmd->callback(deferring_stops("the report had finished; the database was only read", [o] {
    results::check_database_path(o->db);
    if (o->out.empty()) throw core::Error(core::ErrorKind::InvalidInput, "the output folder (-o) is empty");
    results::refuse_database_path(o->out, {o->db});
    for (const char* name : kReportFiles)
      results::refuse_database_path((std::filesystem::path(o->out) / name).string(), {o->db});
    std::string data = report_data_json(o->db);  // bad databases fail here, before Python starts
    // Python before the folder: a Python that cannot start (MGPU_PYTHON_HOME) leaves nothing behind.
    // report.py draws with the Agg backend it chooses itself (matplotlib.use("Agg")): a
    // MPLBACKEND meant for interactive matplotlib (or garbage, which matplotlib refuses at import)
    // has no say in files it writes, so it is not passed on.
    ::unsetenv("MPLBACKEND");
    search::ensure_python();
    search::check_python_module("matplotlib", "python3-matplotlib");
    std::error_code ec;
    if (std::filesystem::exists(o->out, ec) && !std::filesystem::is_directory(o->out, ec))
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("cannot create the folder {}: it is a file", o->out));
    // report.py makes the folder once every picture is drawn (out of memory while drawing leaves
    // none); a write that then fails (a full disk) leaves no empty folder or half a report.
    results::NewFolderGuard made(o->out);
    for (const char* name : kReportFiles) made.will_write((std::filesystem::path(o->out) / name).string());
    // The stop handlers are in place before Python starts, so it leaves Ctrl-C to them (it
    // installs its KeyboardInterrupt only where SIGINT has no handler): a stop ends the command
    // after the report is written, with 128 + the signal; a second one ends it at once.
    nlohmann::json summary = nlohmann::json::parse(search::call_python(kReportPy, "render", {data, o->out}));
    if (summary.contains("failed")) throw render_failure(summary, o->out);
    made.keep();
    if (o->json) {
      std::cout << nlohmann::json{{"db", o->db}, {"output", o->out},
                                  {"index", (std::filesystem::path(o->out) / "index.html").string()},
                                  {"pictures", summary["pictures"]}, {"notes", summary["notes"]}}
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
      return;
    }
    fmt::print("wrote {}/index.html with {} pictures\n", o->out, summary["pictures"].size());
    for (const auto& note : summary["notes"]) fmt::print("note: {}\n", note.get<std::string>());
  }));
}

}  // namespace mgpu::harness
