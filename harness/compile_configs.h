// Compiling a template's configs in parallel and reporting each one's resources: what
// `compile matmul` and `compile <op>` share. Contract: configs with the same kernel key build
// one kernel, built (build()) and compiled once, through the compile cache unless --no-cache;
// each config's row gives its kernel's registers, spills and compile time (and, where the
// template says, its dynamic shared memory and cluster size), with --sass what nvdisasm shows
// of its machine code (no nvdisasm: Error{InvalidInput} before anything compiles); --emit-dir
// receives each kernel's MLIR, PTX and cubin, content-named. A kernel that fails to compile is
// reported in its rows, then Error{Compile} (exit 1) once all are reported.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/App.hpp>

#include "core/arch.h"
#include "core/compile_cache.h"
#include "core/tuning_config.h"

namespace mgpu::harness {

struct CompileFlags {
  std::string emit_dir;
  bool json = false;
  int jobs = 0;
  std::string cache_dir = core::CompileCache::default_dir().string();
  bool no_cache = false;
  bool sass = false;
  std::string assembler = "auto";
  void add(CLI::App& cmd);  // --emit-dir --json -j --cache-dir --no-cache --assembler --sass
};

// One config to compile at a problem, and the key of the kernel it builds (configs that differ
// only in run-time parameters share one).
struct ConfigToCompile {
  core::TuningConfig config;
  std::string problem_key;
  std::string kernel_key;
};

struct KernelBuild {
  std::string mlir;
  std::string kernel_name;
  std::optional<std::int64_t> dynamic_smem_bytes;  // when the template knows it before launch
  std::optional<int> cluster_size;
};

// `problem_key`: the one problem every config is compiled at (the report's "problem"), or
// nullopt when they are at several (each row names its own).
void compile_configs(const core::ArchSpec& arch, const std::string& template_name,
                     const std::optional<std::string>& problem_key, const std::vector<ConfigToCompile>& configs,
                     const std::function<KernelBuild(const ConfigToCompile&)>& build, const CompileFlags& flags);

}  // namespace mgpu::harness
