#include "harness/cmd_model_check.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/arch.h"
#include "core/error.h"
#include "harness/current_templates.h"
#include "harness/measure/stopping_rule.h"
#include "harness/measure/trial_record.h"
#include "harness/stop_signals.h"
#include "kernels/matmul_template.h"
#include "results/store.h"
#include "results/stored_config.h"

namespace mgpu::harness {
namespace {

// Ranks with ties given their mean rank, so that equal predictions neither help nor hurt.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t t = i; t <= j; ++t) r[order[t]] = 0.5 * double(i + j) + 1;
    i = j + 1;
  }
  return r;
}

// Spearman's rho: Pearson's correlation of the ranks; NaN when either side has no spread.
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = double(rx.size()), mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n,
               my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : std::nan("");
}

struct Point {
  std::string schedule;
  double measured_ms = 0, predicted_ms = 0;
};

struct Group {  // one problem on one device
  std::string problem, device, model_device;
  std::map<std::string, std::vector<double>> measured;  // config -> its medians
  std::map<std::string, Point> points;                  // config -> prediction
};

struct Fit {
  int n = 0;
  double rho = std::nan(""), ratio = std::nan("");  // ratio: median of measured / predicted
};

Fit fit(const std::vector<Point>& pts) {
  Fit f;
  f.n = static_cast<int>(pts.size());
  if (pts.empty()) return f;
  std::vector<double> m, p, r;
  for (const Point& x : pts) {
    m.push_back(x.measured_ms);
    p.push_back(x.predicted_ms);
    r.push_back(x.measured_ms / x.predicted_ms);
  }
  if (f.n >= 3) f.rho = spearman(m, p);
  f.ratio = summarize(r).median;
  return f;
}

std::string rho_text(const Fit& f) { return std::isnan(f.rho) ? "-" : fmt::format("{:.2f}", f.rho); }
nlohmann::json rho_json(const Fit& f) { return std::isnan(f.rho) ? nlohmann::json() : nlohmann::json(f.rho); }

// The config's schedule, and its consumers where they are not the default cooperative pair
// (ping-pong is a schedule of the warpgroups): "data_parallel", "split_k+pingpong", "all".
std::string schedule_of(const core::TuningConfig& c) {
  std::string s = c.has("schedule") ? c.get_str("schedule") : std::string("all");
  if (c.has("consumers") && c.get_str("consumers") != "cooperative") s += "+" + c.get_str("consumers");
  return s;
}

void run(const std::vector<std::string>& dbs, bool json) {
  install_stored_config_check();  // a stored config is judged by the current rules
  std::map<std::pair<std::string, std::string>, Group> groups;
  int left_out = 0;
  std::map<std::string, int> why_left_out;
  for (const std::string& db : dbs) {
    results::Store s = results::Store::open(db, results::OpenMode::ReadOnly);
    s.check_every_row();  // damaged for every reader or for none
    results::TrialFilter f;
    f.status = "ok";
    f.source = "cuda";
    for (const results::TrialRow& t : s.trials(f)) {
      if (!t.median_ms || !(*t.median_ms > 0)) continue;
      try {
        const core::ArchSpec& arch = core::parse_arch(t.env.arch);
        const kernels::MatmulTemplate& tmpl = kernels::matmul_template(arch);
        if (t.problem.kernel != "matmul") {
          ++left_out, ++why_left_out[fmt::format("{} trials ({}): model-check covers matmul only", t.problem.kernel,
                                                 t.tmpl.name)];
          continue;
        }
        if (t.tmpl.name != tmpl.name()) {
          ++left_out, ++why_left_out[fmt::format("template {} is not this binary's {}", t.tmpl.name, tmpl.name())];
          continue;
        }
        const core::DeviceSpec* dev = arch.find_device(t.env.device_name);
        const core::DeviceSpec& spec = dev ? *dev : arch.default_device();
        // Parameters a stored config leaves out (knobs added after it was measured) read as the
        // template's defaults, so one kernel counts once whichever version stored it.
        core::TuningConfig c = tmpl.default_config();
        const core::TuningConfig stored = results::stored_config(db, t);
        for (const auto& [name, value] : stored.values()) c.set(name, value);
        kernels::MatmulProblem p = matmul_problem(t.problem);
        tmpl.require_valid(p, c);  // an older version's config today's template would not build
        Group& g = groups[{t.problem.key, t.env.device_name}];
        g.problem = t.problem.key;
        g.device = t.env.device_name;
        g.model_device = std::string(spec.name) + (dev ? "" : " (unknown GPU: the arch's default)");
        const std::string key = c.to_json();
        g.measured[key].push_back(*t.median_ms);
        if (!g.points.count(key))
          g.points[key] = {schedule_of(c), 0, tmpl.predict_ms(p, c, spec)};
      } catch (const core::Error& e) {
        ++left_out, ++why_left_out[e.what()];
      }
    }
  }
  nlohmann::json out = nlohmann::json::array();
  std::map<std::string, std::vector<std::pair<int, double>>> per_schedule;  // schedule -> (n, rho) per group
  if (!json)
    fmt::print("| problem | device (model's rates) | configs | Spearman | measured / predicted | per schedule: configs, "
               "Spearman, measured / predicted |\n|---|---|---:|---:|---:|---|\n");
  for (auto& [key, g] : groups) {
    std::vector<Point> all;
    std::map<std::string, std::vector<Point>> by;
    for (auto& [cfg, pt] : g.points) {
      pt.measured_ms = summarize(g.measured[cfg]).median;
      all.push_back(pt);
      by[pt.schedule].push_back(pt);
    }
    Fit whole = fit(all);
    nlohmann::json sched = nlohmann::json::object();
    std::vector<std::string> parts;
    for (const auto& [name, pts] : by) {
      Fit fs = fit(pts);
      sched[name] = {{"configs", fs.n}, {"spearman", rho_json(fs)}, {"measured_over_predicted", fs.ratio}};
      parts.push_back(fmt::format("{} {}, {}, {:.2f}", name, fs.n, rho_text(fs), fs.ratio));
      if (!std::isnan(fs.rho)) per_schedule[name].push_back({fs.n, fs.rho});
    }
    if (json)
      out.push_back({{"problem", g.problem}, {"device", g.device}, {"model_device", g.model_device},
                     {"configs", whole.n}, {"spearman", rho_json(whole)}, {"measured_over_predicted", whole.ratio},
                     {"schedules", sched}});
    else
      fmt::print("| {} | {} ({}) | {} | {} | {:.2f} | {} |\n", g.problem, g.device, g.model_device, whole.n,
                 rho_text(whole), whole.ratio, fmt::join(parts, "; "));
  }
  nlohmann::json summary = nlohmann::json::object();
  std::vector<std::string> lines;
  for (const auto& [name, fits] : per_schedule) {
    double wsum = 0, n = 0;
    for (auto [k, rho] : fits) wsum += k * rho, n += k;
    summary[name] = {{"groups", fits.size()}, {"configs", n}, {"weighted_spearman", wsum / n}};
    lines.push_back(fmt::format("{}: {:.2f} over {} configs in {} problem(s)", name, wsum / n, n, fits.size()));
  }
  if (json) {
    nlohmann::json why = nlohmann::json::object();
    for (const auto& [w, k] : why_left_out) why[w] = k;
    std::cout << nlohmann::json{{"groups", out}, {"per_schedule", summary}, {"left_out", left_out}, {"left_out_why", why}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  if (groups.empty() && !left_out) fmt::print("(no measured trial: the databases hold no ok trial with source cuda)\n");
  if (!lines.empty())
    fmt::print("\nSpearman per schedule, the groups' values weighted by their configs (groups of 3 or more):\n  {}\n",
               fmt::join(lines, "\n  "));
  if (left_out) {
    fmt::print("\n{} measured trial(s) left out:\n", left_out);
    for (const auto& [w, k] : why_left_out) fmt::print("  {} x {}\n", k, w);
  }
}

}  // namespace

void add_model_check_command(CLI::App& app) {
  struct O {
    std::vector<std::string> dbs;
    bool json = false;
  };
  auto o = std::make_shared<O>();
  auto* cmd = app.add_subcommand(
      "model-check",
      "The cost model against the hardware: each measured trial predicted again for its device, and Spearman's rank "
      "correlation per problem and device, per schedule (read-only)");
  cmd->add_option("--db", o->dbs, "Results database(s) holding measured trials (repeat --db for several)")->required();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback(deferring_stops("the check had finished; the databases were only read", [o] { run(o->dbs, o->json); }));
}

}  // namespace mgpu::harness
