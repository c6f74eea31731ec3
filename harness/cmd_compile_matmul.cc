#include "harness/cmd_compile_matmul.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cache_usability.h"
#include "core/compile_pool.h"
#include "core/error.h"
#include "core/sass/nvdisasm.h"
#include "core/sass/performance_lints.h"
#include "core/sass/sass_profile.h"
#include "harness/config_option.h"
#include "harness/numeric_options.h"
#include "harness/problem_options.h"
#include "harness/sass_report.h"
#include "kernels/matmul_template.h"
#include "results/output_file.h"

namespace mgpu::harness {
namespace {

struct Options {
  ArchOption arch;
  MatmulProblemOptions problem;
  std::string config_json;
  bool all = false;
  std::string emit_dir;
  bool json = false;
  int jobs = 0;
  std::string cache_dir = core::CompileCache::default_dir().string();
  bool no_cache = false;
  bool sass = false;
  std::string assembler = "auto";
};

// The SASS evidence of one compiled kernel: its counts, the assembler's advisory codes, lints.
nlohmann::json sass_evidence(const core::CompiledUnit& u, int spill_store_bytes) {
  return sass_evidence_json({core::profile_sass(core::disassemble(u.cubin.image)),
                             core::assembler_advisories(u.cubin.log), spill_store_bytes,
                             u.ptx.find("setmaxnreg") != std::string::npos});
}

// A full disk is exit 1 with its reason (No space left on device), nothing half-written is left.
void write_file(const std::filesystem::path& p, const std::string& bytes) {
  results::write_file_atomically(p.string(), bytes);
}

void run(const Options& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  kernels::MatmulProblem p = o.problem.resolve();
  const kernels::MatmulTemplate& t = kernels::matmul_template(arch);
  t.check_problem(p);
  if (o.all == !o.config_json.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "give exactly one of --config JSON and --all");
  if (o.sass) require_nvdisasm("--sass");

  // The configs, and for each the kernel it builds (deduplicated by module text).
  std::vector<core::TuningConfig> configs;
  if (o.all) {
    t.space().enumerate([&](const core::TuningConfig& c) {
      if (!t.why_invalid(p, c)) configs.push_back(c);
    });
  } else {
    core::TuningConfig c = config_from_user(t, o.config_json);
    t.require_valid(p, c);
    configs.push_back(c);
  }
  auto t0 = std::chrono::steady_clock::now();
  // Configs that differ only in run-time parameters build the same kernel: build it once.
  std::vector<core::CompileJob> jobs;
  std::vector<core::BuiltKernel> built;
  std::map<std::string, size_t> job_of_kernel;
  std::vector<size_t> job_of_config;
  for (const core::TuningConfig& c : configs) {
    core::TuningConfig kernel_key = c;
    for (const std::string& name : t.run_time_params()) kernel_key.set(name, std::int64_t{0});
    auto [it, fresh] = job_of_kernel.emplace(kernel_key.to_json(), jobs.size());
    if (fresh) {
      built.push_back(t.build(p, c));
      jobs.push_back({built.back().mlir, &arch});
    }
    job_of_config.push_back(it->second);
  }
  core::CompileOptions copts = core::CompileOptions::from_environment();
  copts.assembler = core::parse_assembler(o.assembler);
  copts.cache_dir = o.no_cache ? "" : o.cache_dir;
  if (!copts.cache_dir.empty()) {
    if (auto why = core::why_cache_unusable(copts.cache_dir)) {
      core::warn_cache_unusable(copts.cache_dir, *why);
      copts.cache_dir.clear();
    }
  }
  std::vector<core::CompileOutcome> out = core::compile_all(jobs, copts, o.jobs);
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (!o.emit_dir.empty()) {
    std::filesystem::create_directories(o.emit_dir);
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (!out[j].ok()) continue;
      std::string stem = core::cache_key(jobs[j].mlir_text, arch, copts).substr(0, 16);  // content-named
      std::filesystem::path base = std::filesystem::path(o.emit_dir) / stem;
      write_file(base.string() + ".mlir", jobs[j].mlir_text);
      write_file(base.string() + ".ptx", out[j].result->units.at(0).ptx);
      write_file(base.string() + ".cubin", out[j].result->units.at(0).cubin.image);
    }
  }

  int failures = 0, hits = 0;
  for (const core::CompileOutcome& x : out) {
    failures += !x.ok();
    hits += x.ok() && x.result->cache_hit;
  }
  std::vector<nlohmann::json> sass(jobs.size());
  if (o.sass)
    for (size_t j = 0; j < jobs.size(); ++j)
      if (out[j].ok())
        sass[j] = sass_evidence(out[j].result->units.at(0),
                                out[j].result->units.at(0).cubin.kernels.at(built[j].kernel_name).spill_store_bytes);
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < configs.size(); ++i) {
    const core::CompileOutcome& x = out[job_of_config[i]];
    const core::BuiltKernel& b = built[job_of_config[i]];
    nlohmann::json row = {{"config", nlohmann::json::parse(configs[i].to_json())}, {"kernel", job_of_config[i]}};
    if (x.ok()) {
      const core::KernelResources& r = x.result->units.at(0).cubin.kernels.at(b.kernel_name);
      row.update({{"ok", true}, {"registers", r.registers}, {"spill_store_bytes", r.spill_store_bytes},
                  {"dynamic_smem_bytes", b.dynamic_smem_bytes}, {"cluster_size", b.cluster_size},
                  {"compile_ms", x.result->times.total_ms}, {"cache_hit", x.result->cache_hit},
                  {"assembler", core::to_string(x.result->assembler)}});
      if (o.sass) row["sass"] = sass[job_of_config[i]];
    } else {
      row.update({{"ok", false}, {"error", x.error->what()}});
    }
    rows.push_back(row);
  }
  if (o.json) {
    std::cout << nlohmann::json{{"template", t.name()}, {"arch", arch.name}, {"problem", p.key()},
                                {"configs", rows}, {"kernels", jobs.size()}, {"failed_kernels", failures},
                                {"cache_hits", hits}, {"wall_s", wall_s}}
                     .dump(2)
              << "\n";
  } else {
    for (const nlohmann::json& row : rows) {
      if (row["ok"])
        fmt::print("ok    {:>3} regs {:>6} B SMEM  {:>7.1f} ms{}  {}\n", row["registers"].get<int>(),
                   row["dynamic_smem_bytes"].get<int>(), row["compile_ms"].get<double>(),
                   row["cache_hit"].get<bool>() ? " (cached)" : "         ", row["config"].dump());
      if (row["ok"] && row.contains("sass")) fmt::print("{}\n", sass_line(row["sass"]));
      if (!row["ok"])
        fmt::print("error {}  {}\n", row["config"].dump(), row["error"].get<std::string>());
    }
    fmt::print("{} configs, {} kernels ({} from cache, {} failed) in {:.1f} s: {:.1f} kernels/s on {} threads\n",
               configs.size(), jobs.size(), hits, failures, wall_s, jobs.size() / wall_s,
               o.jobs > 0 ? o.jobs : int(std::thread::hardware_concurrency()));
  }
  if (failures)
    throw core::Error(core::ErrorKind::Compile, fmt::format("{} of {} kernels failed to compile", failures, jobs.size()));
}

}  // namespace

void add_compile_matmul_subcommand(CLI::App& compile) {
  auto o = std::make_shared<Options>();
  auto* cmd = compile.add_subcommand("matmul", "Compile matmul template configs in parallel");
  o->arch.add(*cmd);
  o->problem.add(*cmd);
  cmd->add_option("--config", o->config_json,
                  "One config as JSON (see 'mgpu-tune space matmul' for names); fields left out take the "
                  "template's defaults, named on stderr");
  cmd->add_flag("--all", o->all, "Every valid config of the default space");
  cmd->add_option("--emit-dir", o->emit_dir, "Write each kernel's MLIR, PTX and cubin here");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_option("-j,--jobs", o->jobs, "Compile threads (default: one per hardware thread)")->check(whole_number(1, 4096));
  cmd->add_option("--cache-dir", o->cache_dir, "Compile cache folder (also $MGPU_CACHE_DIR)")->capture_default_str();
  cmd->add_flag("--no-cache", o->no_cache, "Neither read nor write the compile cache");
  cmd->add_option("--assembler", o->assembler,
                  "PTX to cubin: auto (ptxas, whole-program: it keeps setmaxnreg), ptxas, or nvjitlink (relocatable: "
                  "it drops setmaxnreg, C7504); with --no-cache, compare their compile times")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "ptxas", "nvjitlink"}));
  cmd->add_flag("--sass", o->sass,
                "Per kernel, what its machine code shows (nvdisasm): whether setmaxnreg survived, the main "
                "loop's MMA/TMA/barrier/warpgroup-wait/local-memory counts, and the assembler's advisory codes");
  cmd->callback([o] { run(*o); });
}

}  // namespace mgpu::harness
