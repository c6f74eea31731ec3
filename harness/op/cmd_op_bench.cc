#include "harness/op/cmd_op_bench.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "harness/bench_repeat.h"
#include "harness/cli.h"
#include "harness/config_option.h"
#include "harness/exit_codes.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/op_measurer.h"
#include "harness/numeric_options.h"
#include "harness/op/problem_flags.h"
#include "harness/problem_options.h"
#include "kernels/op_registry.h"

namespace mgpu::harness {
namespace {

struct BenchFlags {
  ArchOption arch;
  ProblemFlags problem;
  std::string config_json;
  int repeat = 10;
  double min_time_s = StoppingRule::strict().min_time_s;
  double max_time_s = StoppingRule::strict().max_time_s;
  std::string timer = "auto";
  bool json = false;
};

void run(const std::string& op, const BenchFlags& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  const kernels::OpTemplate& t = kernels::op_template(op, arch);
  const kernels::Problem p = o.problem.problem(t);
  check_timer_choice(o.timer);
  const StoppingRule rule = bench_rule(o.min_time_s, o.max_time_s);
  const core::TuningConfig cfg = o.config_json.empty() ? t.default_config() : config_from_user(t, o.config_json);
  t.require_valid(p, cfg);
  // Bad input is said before the GPU is looked for; then no GPU of the arch is exit 3.
  const core::GpuInfo gpu = bench_gpu(arch);
  const Timer timer = choose_timer(o.timer);
  // The first measurement checks the kernel against the op's float64 reference at its
  // verification problems (op_measurer.h); the others only time it.
  const RepeatedTimes times = measure_repeatedly(o.repeat, timer, [&](Timer with, bool verify) {
    TrialRequest req;
    req.arch = std::string(arch.name);
    req.op = op;
    req.problem_key = p.key;
    req.config = cfg;
    req.measurer = "cuda";
    req.rule = rule;
    req.verify = verify;
    req.timer = std::string(to_string(with));
    return measure_op_trial(req, t);
  });
  const std::vector<double>& medians = times.medians;
  const std::optional<double>& events_ms = times.events_ms;
  const double ours = times.median, spread = times.spread, noise = times.max_noise;
  const double tflops = p.flops / (ours * 1e-3) / 1e12;
  if (o.json) {
    std::cout << nlohmann::json{{"op", op}, {"template", t.name()}, {"problem", p.key}, {"device", gpu.name},
                                {"config", nlohmann::json::parse(cfg.to_json())}, {"medians_ms", medians},
                                {"median_ms", ours}, {"spread", spread}, {"max_noise", noise}, {"tflops", tflops},
                                {"timer", to_string(timer)}, {"min_time_s", o.min_time_s}, {"max_time_s", o.max_time_s},
                                {"events_median_ms", events_ms ? nlohmann::json(*events_ms) : nlohmann::json()}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  fmt::print("{} {} on {} ({} runs, strict rule, {} timing): median {:.4f} ms = {:.1f} TFLOP/s, spread of medians "
             "{:.2f}%, worst noise {:.2f}%\n",
             t.name(), p.key, gpu.name, o.repeat, to_string(timer), ours, tflops, 100 * spread, 100 * noise);
  if (events_ms)
    fmt::print("CUDA events time the same config at {:.4f} ms: {:+.1f} us over CUPTI's kernel time\n", *events_ms,
               (*events_ms - ours) * 1e3);
}

}  // namespace

void add_op_bench_subcommand(CLI::App& bench, const kernels::OpEntry& e) {
  const kernels::OpTemplate& t = e.for_arch(core::parse_arch(e.default_arch));
  auto o = std::make_shared<BenchFlags>();
  auto* cmd = bench.add_subcommand(
      e.op, fmt::format("One {} config on the GPU, checked against the float64 reference at the op's verification "
                        "problems, then measured --repeat times (no vendor library to compare with here)\nExample:\n"
                        "  mgpu-tune bench {} --arch {} --seq-q 8192 --config '{}'",
                        e.op, e.op, e.default_arch, t.default_config().to_json()));
  o->arch.add(*cmd);
  o->problem.add(*cmd, t);
  cmd->add_option("--config", o->config_json,
                  "Config as JSON (default: the template's default config; fields left out take its values)");
  cmd->add_option("--repeat", o->repeat, "Independent strict measurements")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_option("--min-time", o->min_time_s,
                  "Least kernel time in seconds each strict measurement gathers before its noise bound may stop it")
      ->check(finite_number(0, 10, true))
      ->capture_default_str();
  cmd->add_option("--max-time", o->max_time_s,
                  "Wall seconds at most per strict measurement; one stopped here has not met the noise bound")
      ->check(finite_number(0, 600, true))
      ->capture_default_str();
  cmd->add_option("--timer", o->timer, "cupti, events or auto (CUPTI when it loads)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  const std::string op = e.op;
  cmd->callback([o, op] { run(op, *o); });
}

}  // namespace mgpu::harness
