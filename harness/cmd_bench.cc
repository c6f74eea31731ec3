#include "harness/cmd_bench.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cublaslt.h"
#include "core/cuda_context.h"
#include "core/device_query.h"
#include "core/cuda_driver.h"
#include "core/error.h"
#include "harness/bench_repeat.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/measure_trial.h"
#include "harness/config_option.h"
#include "harness/numeric_options.h"
#include "harness/problem_options.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {
namespace {

struct Options {
  ArchOption arch;
  MatmulProblemOptions problem;
  std::string config_json;
  int repeat = 10;
  double min_time_s = StoppingRule::strict().min_time_s;
  double max_time_s = StoppingRule::strict().max_time_s;
  std::string timer = "auto";
  bool json = false;
};

double cublas_median_ms(const kernels::MatmulProblem& p, const core::GpuInfo& gpu, Timer timer, const StoppingRule& rule) {
  const int in = kernels::size_in_bytes(p.in_dtype), out = kernels::size_in_bytes(p.out_dtype);
  std::uint64_t seed = std::hash<std::string>{}(p.key());
  auto a = kernels::seeded_input(p.m * p.k, seed, p.in_dtype), b = kernels::seeded_input(p.k * p.n, seed + 1, p.in_dtype);
  core::DeviceBuffer da(a.size() * in), db(b.size() * in), dc(p.m * p.n * out), flush(2 * gpu.l2_bytes);
  constexpr std::size_t kWorkspace = 32u << 20;
  core::DeviceBuffer ws(kWorkspace);
  da.upload(std::as_bytes(std::span(a)));
  db.upload(std::as_bytes(std::span(b)));
  const core::CublasLt& lt = core::CublasLt::get();
  SampleCollector s = time_launches(
      [&] {
        lt.matmul(da.ptr(), db.ptr(), dc.ptr(), p.m, p.n, p.k, p.b_layout == kernels::BLayout::NK,
                  p.in_dtype == kernels::DType::BF16, out, ws.ptr(), kWorkspace);
      },
      rule, flush, timer);
  return summarize(s.samples()).median;
}

void run(const Options& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  kernels::MatmulProblem p = o.problem.resolve();
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  t.check_problem(p);
  if (o.repeat < 1) throw core::Error(core::ErrorKind::InvalidInput, "--repeat must be at least 1");
  check_timer_choice(o.timer);
  const StoppingRule rule = bench_rule(o.min_time_s, o.max_time_s);
  core::TuningConfig cfg = o.config_json.empty() ? t.default_config() : config_from_user(t, o.config_json);
  t.require_valid(p, cfg);
  const core::GpuInfo gpu = bench_gpu(arch);
  const Timer timer = choose_timer(o.timer);
  const RepeatedTimes times = measure_repeatedly(o.repeat, timer, [&](Timer with, bool verify) {
    TrialRequest req;
    req.arch = std::string(arch.name);
    req.problem = p;
    req.config = cfg;
    req.measurer = "cuda";
    req.rule = rule;
    req.verify = verify;
    req.timer = std::string(to_string(with));
    return measure_trial(req);
  });
  const std::vector<double>& medians = times.medians;
  const std::optional<double>& events_ms = times.events_ms;
  const double ours = times.median, spread = times.spread, noise = times.max_noise;
  double theirs = cublas_median_ms(p, gpu, timer, rule);
  auto tflops = [&](double ms) { return p.flops() / (ms * 1e-3) / 1e12; };
  if (o.json) {
    std::cout << nlohmann::json{{"problem", p.key()}, {"device", gpu.name}, {"config", nlohmann::json::parse(cfg.to_json())},
                                {"medians_ms", medians}, {"median_ms", ours}, {"spread", spread}, {"max_noise", noise},
                                {"tflops", tflops(ours)}, {"cublas_ms", theirs}, {"cublas_tflops", tflops(theirs)},
                                {"percent_of_cublas", 100 * theirs / ours}, {"timer", to_string(timer)}, {"min_time_s", o.min_time_s}, {"max_time_s", o.max_time_s},
                                {"events_median_ms", events_ms ? nlohmann::json(*events_ms) : nlohmann::json()}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return;
  }
  fmt::print("{} on {} ({} runs, strict rule, {} timing): median {:.4f} ms = {:.1f} TFLOP/s, spread of medians {:.2f}%, "
             "worst noise {:.2f}%\n",
             p.key(), gpu.name, o.repeat, to_string(timer), ours, tflops(ours), 100 * spread, 100 * noise);
  fmt::print("cuBLASLt: {:.4f} ms = {:.1f} TFLOP/s; this config reaches {:.1f}% of cuBLAS\n", theirs, tflops(theirs),
             100 * theirs / ours);
  if (events_ms)
    fmt::print("CUDA events time the same config at {:.4f} ms: {:+.1f} us over CUPTI's kernel time\n", *events_ms,
               (*events_ms - ours) * 1e3);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmark one config on the GPU (a matmul against cuBLASLt)");
  bench->require_subcommand(1);
  auto o = std::make_shared<Options>();
  auto* cmd = bench->add_subcommand("matmul", "One matmul config, measured --repeat times, vs cuBLASLt");
  o->arch.add(*cmd);
  o->problem.add(*cmd);
  cmd->add_option("--config", o->config_json,
                  "Config as JSON (default: the template's default config; fields left out take its values)");
  cmd->add_option("--repeat", o->repeat, "Independent strict measurements")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_option("--min-time", o->min_time_s,
                  "Least kernel time in seconds each strict measurement (ours and cuBLASLt's) gathers before its "
                  "noise bound may stop it: nvbench's 0.5 by default; 0.05 measures a 20 us decode kernel in "
                  "about a tenth of the time")
      ->check(finite_number(0, 10, true))
      ->capture_default_str();
  cmd->add_option("--max-time", o->max_time_s,
                  "Wall seconds at most per strict measurement; one stopped here has not met the noise bound "
                  "(its noise is reported)")
      ->check(finite_number(0, 600, true))
      ->capture_default_str();
  cmd->add_option("--timer", o->timer, "cupti, events or auto (CUPTI when it loads)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
