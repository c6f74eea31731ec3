#include "harness/report/cmd_report.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/report/report_data.h"
#include "harness/report/report_py.h"
#include "search/python_runtime.h"

namespace mgpu::harness {

void add_report_command(CLI::App& app) {
  struct O {
    std::string db, out = "mgpu-report";
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("report", "Write an HTML report with pictures of a results database");
  cmd->add_option("--db", o->db, "Results database (read only)")->required();
  cmd->add_option("-o,--output", o->out, "Folder for index.html and its pictures")->capture_default_str();
  cmd->callback([o] {
    std::string data = report_data_json(o->db);  // bad databases fail here, before Python starts
    std::error_code ec;
    std::filesystem::create_directories(o->out, ec);
    if (ec || !std::filesystem::is_directory(o->out))
      throw core::Error(core::ErrorKind::InvalidInput, fmt::format("cannot create the folder {}", o->out));
    search::ensure_python();
    search::check_python_module("matplotlib", "python3-matplotlib");
    nlohmann::json summary = nlohmann::json::parse(search::call_python(kReportPy, "render", {data, o->out}));
    fmt::print("wrote {}/index.html with {} pictures\n", o->out, summary["pictures"].size());
    for (const auto& note : summary["notes"]) fmt::print("note: {}\n", note.get<std::string>());
  });
}

}  // namespace mgpu::harness
