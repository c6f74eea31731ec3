#include "harness/compile_configs.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cache_usability.h"
#include "core/compile_pool.h"
#include "core/error.h"
#include "core/sass/nvdisasm.h"
#include "core/sass/kernel_evidence.h"
#include "core/sass/performance_lints.h"
#include "core/sass/sass_profile.h"
#include "harness/numeric_options.h"
#include "harness/sass_report.h"
#include "results/output_file.h"

namespace mgpu::harness {

void CompileFlags::add(CLI::App& cmd) {
  cmd.add_option("--emit-dir", emit_dir, "Write each kernel's MLIR, PTX and cubin here");
  cmd.add_flag("--json", json, "Print JSON");
  cmd.add_option("-j,--jobs", jobs, "Compile threads (default: one per hardware thread)")->check(whole_number(1, 4096));
  cmd.add_option("--cache-dir", cache_dir, "Compile cache folder (also $MGPU_CACHE_DIR)")->capture_default_str();
  cmd.add_flag("--no-cache", no_cache, "Neither read nor write the compile cache");
  cmd.add_option("--assembler", assembler,
                 "PTX to cubin: auto (ptxas, whole-program: it keeps setmaxnreg), ptxas, or nvjitlink (relocatable: "
                 "it drops setmaxnreg, C7504); with --no-cache, compare their compile times")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "ptxas", "nvjitlink"}));
  cmd.add_flag("--sass", sass,
               "Per kernel, what its machine code shows (nvdisasm): whether setmaxnreg survived, the main "
               "loop's MMA/TMA/barrier/warpgroup-wait/local-memory counts, spills, and the assembler's advisory codes");
}

void compile_configs(const core::ArchSpec& arch, const std::string& template_name,
                     const std::optional<std::string>& problem_key, const std::vector<ConfigToCompile>& configs,
                     const std::function<KernelBuild(const ConfigToCompile&)>& build, const CompileFlags& o) {
  if (o.sass) require_nvdisasm("--sass");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<core::CompileJob> jobs;
  std::vector<KernelBuild> built;
  std::map<std::string, size_t> job_of_kernel;
  std::vector<size_t> job_of_config;
  for (const ConfigToCompile& c : configs) {
    auto [it, fresh] = job_of_kernel.emplace(c.kernel_key, jobs.size());
    if (fresh) {
      built.push_back(build(c));
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
      // A full disk is exit 1 with its reason; nothing half-written is left.
      results::write_file_atomically(base.string() + ".mlir", jobs[j].mlir_text);
      results::write_file_atomically(base.string() + ".ptx", out[j].result->units.at(0).ptx);
      results::write_file_atomically(base.string() + ".cubin", out[j].result->units.at(0).cubin.image);
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
        sass[j] = sass_evidence_json(core::evidence_of(out[j].result->units.at(0), built[j].kernel_name));
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < configs.size(); ++i) {
    const core::CompileOutcome& x = out[job_of_config[i]];
    const KernelBuild& b = built[job_of_config[i]];
    nlohmann::json row = {{"config", nlohmann::json::parse(configs[i].config.to_json())}, {"kernel", job_of_config[i]}};
    if (!problem_key) row["problem"] = configs[i].problem_key;
    if (x.ok()) {
      const core::KernelResources& r = x.result->units.at(0).cubin.kernels.at(b.kernel_name);
      row.update({{"ok", true}, {"registers", r.registers}, {"spill_store_bytes", r.spill_store_bytes},
                  {"spill_load_bytes", r.spill_load_bytes}, {"compile_ms", x.result->times.total_ms},
                  {"cache_hit", x.result->cache_hit}, {"assembler", core::to_string(x.result->assembler)}});
      if (b.dynamic_smem_bytes) row["dynamic_smem_bytes"] = *b.dynamic_smem_bytes;
      if (b.cluster_size) row["cluster_size"] = *b.cluster_size;
      if (o.sass) row["sass"] = sass[job_of_config[i]];
    } else {
      row.update({{"ok", false}, {"error", x.error->what()}});
    }
    rows.push_back(row);
  }
  if (o.json) {
    std::cout << nlohmann::json{{"template", template_name}, {"arch", arch.name}, {"problem", problem_key ? nlohmann::json(*problem_key) : nlohmann::json(nullptr)},
                                {"configs", rows}, {"kernels", jobs.size()}, {"failed_kernels", failures},
                                {"cache_hits", hits}, {"wall_s", wall_s}}
                     .dump(2)
              << "\n";
  } else {
    for (size_t i = 0; i < rows.size(); ++i) {
      const nlohmann::json& row = rows[i];
      if (row["ok"]) {
        const std::string smem = row.contains("dynamic_smem_bytes")
                                     ? fmt::format("{:>6} B SMEM", row["dynamic_smem_bytes"].get<std::int64_t>())
                                     : fmt::format("{:>6} B spills", row["spill_store_bytes"].get<int>());
        fmt::print("ok    {:>3} regs {}  {:>7.1f} ms{}  {}{}\n", row["registers"].get<int>(), smem,
                   row["compile_ms"].get<double>(), row["cache_hit"].get<bool>() ? " (cached)" : "         ",
                   problem_key ? "" : configs[i].problem_key + "  ", row["config"].dump());
      }
      if (row["ok"] && row.contains("sass")) fmt::print("{}\n", sass_line(row["sass"]));
      if (!row["ok"]) fmt::print("error {}  {}\n", row["config"].dump(), row["error"].get<std::string>());
    }
    fmt::print("{} configs, {} kernels ({} from cache, {} failed) in {:.1f} s: {:.1f} kernels/s on {} threads\n",
               configs.size(), jobs.size(), hits, failures, wall_s, jobs.size() / wall_s,
               o.jobs > 0 ? o.jobs : int(std::thread::hardware_concurrency()));
  }
  if (failures)
    throw core::Error(core::ErrorKind::Compile, fmt::format("{} of {} kernels failed to compile", failures, jobs.size()));
}

}  // namespace mgpu::harness
