#include "harness/cmd_compile.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/compiler.h"
#include "core/error.h"
#include "core/input_file.h"
#include "harness/cmd_compile_matmul.h"
#include "harness/numeric_options.h"
#include "harness/problem_options.h"
#include "results/output_file.h"

namespace mgpu::harness {
namespace {

struct Options {
  std::string mlir_file;
  ArchOption arch;
  std::string emit;  // "", "ptx", "cubin"
  std::string output;
  bool json = false;
  std::string assembler = "auto";
  int opt_level = 3;
  std::string cache_dir = core::CompileCache::default_dir().string();
  bool no_cache = false;
  std::string dump_dir;
};

// Replaced whole or not at all, and never over the module it came from (by name, symlink or
// hard link): `-o k.mlir` once turned the source into PTX.
void write_output(const Options& o, const std::string& bytes) {
  results::refuse_database_path(o.output, {o.mlir_file}, "the input MLIR file");
  // A FIFO is written in place, and only when a reader has it open: else the open waits forever.
  if (const int fd = core::open_output_fifo(o.output, "-o"); fd >= 0) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        ::close(fd);
        throw core::Error(core::ErrorKind::IO, fmt::format("cannot write {}: {}", o.output, std::strerror(err)));
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    return;
  }
  results::write_file_atomically(o.output, bytes);
}

nlohmann::json to_json(const Options& o, const core::ArchSpec& arch, const core::CompileResult& r) {
  nlohmann::json units = nlohmann::json::array();
  for (const core::CompiledUnit& u : r.units) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const std::string& k : u.kernels) {
      core::KernelResources res = u.cubin.kernels.count(k) ? u.cubin.kernels.at(k) : core::KernelResources{};
      kernels.push_back({{"name", k}, {"registers", res.registers},
                         {"shared_static_bytes", res.shared_static_bytes}, {"stack_bytes", res.stack_bytes},
                         {"spill_store_bytes", res.spill_store_bytes}, {"spill_load_bytes", res.spill_load_bytes},
                         {"barriers", res.barriers}});
    }
    units.push_back({{"module", u.module_name}, {"kernels", kernels}, {"ptx_bytes", u.ptx.size()},
                     {"cubin_bytes", u.cubin.image.size()}});
  }
  return {{"file", o.mlir_file},
          {"arch", arch.name},
          {"assembler", core::to_string(r.assembler)},
          {"cache_hit", r.cache_hit},
          {"cache_key", r.key},
          {"times_ms", {{"parse", r.times.parse_ms}, {"lower", r.times.lower_ms},
                        {"assemble", r.times.assemble_ms}, {"total", r.times.total_ms}}},
          {"units", units}};
}

void print_text(std::FILE* to, const Options& o, const core::ArchSpec& arch, const core::CompileResult& r) {
  fmt::print(to, "compiled {} for {} with {} ({}) in {:.1f} ms", o.mlir_file, arch.name,
             core::to_string(r.assembler), r.cache_hit ? "cache hit" : o.no_cache ? "no cache" : "cache miss",
             r.times.total_ms);
  if (!r.cache_hit)
    fmt::print(to, ": parse {:.1f} ms, lower {:.1f} ms, assemble {:.1f} ms", r.times.parse_ms,
               r.times.lower_ms, r.times.assemble_ms);
  fmt::print(to, "\n");
  for (const core::CompiledUnit& u : r.units)
    for (const std::string& k : u.kernels) {
      core::KernelResources res = u.cubin.kernels.count(k) ? u.cubin.kernels.at(k) : core::KernelResources{};
      fmt::print(to, "  @{}::{}: {} registers, {} B static SMEM, {} B stack, {} B spill stores, {} B spill loads\n",
                 u.module_name, k, res.registers, res.shared_static_bytes, res.stack_bytes,
                 res.spill_store_bytes, res.spill_load_bytes);
    }
}

void run(const Options& o) {
  const core::ArchSpec& arch = o.arch.resolve();
  core::CompileOptions copts = core::CompileOptions::from_environment();
  copts.assembler = core::parse_assembler(o.assembler);
  copts.opt_level = o.opt_level;
  copts.cache_dir = o.no_cache ? "" : o.cache_dir;
  if (!o.dump_dir.empty()) copts.dump_dir = o.dump_dir;
  copts.source_name = o.mlir_file;  // a parse error names the file and line, not "-"
  if (o.emit == "cubin" && o.output.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "--emit cubin needs -o FILE (a cubin is binary)");
  if (!o.output.empty() && o.emit.empty())
    throw core::Error(core::ErrorKind::InvalidInput, "-o needs --emit ptx or --emit cubin");

  if (!o.output.empty()) results::refuse_database_path(o.output, {o.mlir_file}, "the input MLIR file");
  const std::string mlir = core::read_input_file(o.mlir_file, "MLIR file");
  core::CompileResult r = core::compile_module(mlir, arch, copts);

  bool ptx_to_stdout = o.emit == "ptx" && o.output.empty();
  if (!o.emit.empty()) {
    if (r.units.size() != 1)
      throw core::Error(core::ErrorKind::InvalidInput,
                        fmt::format("--emit takes a module with one gpu.module; {} has {}", o.mlir_file, r.units.size()));
    const core::CompiledUnit& u = r.units[0];
    const std::string& bytes = o.emit == "ptx" ? u.ptx : u.cubin.image;
    if (ptx_to_stdout) std::cout << bytes;
    else write_output(o, bytes);
  }
  // The report goes to stderr when stdout carries the PTX itself.
  if (o.json) (ptx_to_stdout ? std::cerr : std::cout) << to_json(o, arch, r).dump(2) << "\n";
  else print_text(ptx_to_stdout ? stderr : stdout, o, arch, r);
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("compile", "Compile an MLIR module through the MGPU backend to PTX and cubin");
  cmd->add_option("--mlir", o->mlir_file, "MLIR file holding gpu.module kernels");
  cmd->add_option("--arch", o->arch.text, fmt::format("Target GPU architecture: {}", core::arch_choices()));
  cmd->add_option("--emit", o->emit, "Write the PTX or the cubin (ptx without -o prints to stdout)")
      ->check(CLI::IsMember({"ptx", "cubin"}));
  cmd->add_option("-o,--output", o->output, "File for --emit");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_option("--assembler", o->assembler, "PTX assembler: auto (the toolkit's ptxas, whole-program so setmaxnreg survives; nvJitLink where ptxas is missing), nvjitlink, ptxas")
      ->capture_default_str();
  cmd->add_option("-O,--opt-level", o->opt_level, "Optimization level of LLVM and the assembler")
      ->check(whole_number(0, 3))
      ->capture_default_str();
  cmd->add_option("--cache-dir", o->cache_dir, "Compile cache folder (also $MGPU_CACHE_DIR)")->capture_default_str();
  cmd->add_flag("--no-cache", o->no_cache, "Neither read nor write the compile cache");
  cmd->add_option("--dump", o->dump_dir,
                  "Write the MLIR after each pass, the PTX and the assembler log to this folder "
                  "(also $MGPU_DUMP_TO); bypasses the cache");
  add_compile_matmul_subcommand(*cmd);
  cmd->callback([o, cmd] {
    if (!cmd->get_subcommands().empty()) return;  // a template's subcommand did the work
    if (o->mlir_file.empty())
      throw core::Error(core::ErrorKind::InvalidInput, "give --mlir FILE, or a template: 'compile matmul ...', 'compile attention ...'");
    if (o->arch.text.empty()) throw core::Error(core::ErrorKind::InvalidInput, "--arch is required");
    run(*o);
  });
}

}  // namespace mgpu::harness
