#include "harness/cmd_trials.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/error.h"
#include "harness/numeric_options.h"
#include "harness/stop_signals.h"
#include "harness/measure/measurement.h"
#include "results/store.h"
#include "results/stored_config.h"

namespace mgpu::harness {
namespace {

std::vector<std::string> status_names() {
  std::vector<std::string> out;
  // Every status the store records, verification failures and env_error included.
  for (TrialStatus s : {TrialStatus::Ok, TrialStatus::CompileError, TrialStatus::LaunchError, TrialStatus::Fault,
                        TrialStatus::Timeout, TrialStatus::WrongResult, TrialStatus::InvalidConfig,
                        TrialStatus::EnvError, TrialStatus::Hazard, TrialStatus::Deadlock, TrialStatus::Unsupported})
    out.emplace_back(to_string(s));
  return out;
}

bool timed(const results::TrialRow& t) { return t.status == "ok" && t.median_ms && *t.median_ms > 0; }

}  // namespace

void add_trials_command(CLI::App& app) {
  struct O {
    std::string db, run, status, source, template_name, arch;
    int limit = 0;
    bool json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand("trials", "List a database's trials (config, status, time, source), oldest first");
  cmd->add_option("--db", o->db, "Results database (read only)")->required();
  cmd->add_option("--run", o->run, "Only this run's trials (id or uuid prefix; see 'best --runs')");
  cmd->add_option("--status", o->status, "Only trials with this status")->check(CLI::IsMember(status_names()));
  cmd->add_option("--source", o->source,
                  "Only measured (cuda), predicted (model), replayed, virtual-device (emulate) or imported trials")
      ->check(CLI::IsMember({"cuda", "model", "replay", "emulate", "imported"}));
  cmd->add_option("--template", o->template_name, "Only this template's trials");
  cmd->add_option("--arch", o->arch, "Only trials for this arch (sm_90a, sm_100a; sm_90, sm_100)");
  cmd->add_option("--limit", o->limit, "Show only the newest N matching trials")->check(whole_number(1, 1000000000));
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback(deferring_stops("the listing had finished; the database was only read", [o] {
    results::TrialFilter f;
    f.status = o->status;
    f.source = o->source;
    if (!o->arch.empty()) f.arch = std::string(core::parse_arch(o->arch).name);
    results::Store s = results::Store::open(o->db, results::OpenMode::ReadOnly);
    if (!o->run.empty()) f.run_id = s.run(o->run).id;
    if (!o->template_name.empty()) {
      std::vector<std::string> names = s.template_names();
      if (std::find(names.begin(), names.end(), o->template_name) == names.end())
        throw core::Error(core::ErrorKind::InvalidInput,
                          fmt::format("no template '{}' in {} (it has: {})", o->template_name, o->db,
                                      names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
      f.template_name = o->template_name;
    }
    std::vector<results::TrialRow> rows = s.trials(f);
    const size_t matching = rows.size();
    if (o->limit > 0 && rows.size() > static_cast<size_t>(o->limit))
      rows.erase(rows.begin(), rows.end() - o->limit);
    if (o->json) {
      nlohmann::json list = nlohmann::json::array();
      for (const results::TrialRow& t : rows)
        list.push_back({{"id", t.id}, {"uuid", t.uuid}, {"run", t.run_id}, {"template", t.tmpl.name},
                        {"problem", t.problem.key}, {"device", t.env.device_name}, {"arch", t.env.arch},
                        {"source", t.source}, {"status", t.status},
                        {"median_ms", t.median_ms ? nlohmann::json(*t.median_ms) : nlohmann::json()},
                        {"tflops", timed(t) ? nlohmann::json(results::tflops(t)) : nlohmann::json()},
                        {"noise", t.noise ? nlohmann::json(*t.noise) : nlohmann::json()},
                        {"config", nlohmann::json::parse(results::stored_config_text(o->db, t.id, t.config_json).to_json())}, {"message", t.message},
                        {"created_at", t.created_at}});
      std::cout << nlohmann::json{{"db", o->db}, {"matching", matching}, {"shown", rows.size()}, {"trials", list}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
      return;
    }
    fmt::print("| trial | run | template | problem | arch | source | status | median ms | TFLOP/s | config |\n"
               "|---:|---:|---|---|---|---|---|---:|---:|---|\n");
    for (const results::TrialRow& t : rows)
      fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | `{}` |\n", t.id, t.run_id, t.tmpl.name, t.problem.key,
                 t.env.arch, t.source, t.status, t.median_ms ? fmt::format("{:.4f}", *t.median_ms) : "",
                 timed(t) ? fmt::format("{:.1f}", results::tflops(t)) : "", t.config_json);
    if (rows.size() < matching)
      fmt::print("\nshowing the newest {} of {} matching trials (--limit)\n", rows.size(), matching);
    else
      fmt::print("\n{} trial{}\n", matching, matching == 1 ? "" : "s");
  }));
}

}  // namespace mgpu::harness
