#include "core/compiler.h"

#include "core/cache_usability.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>
#include <llvm/ADT/StringExtras.h>

#include "core/error.h"
#include "core/external_tool.h"
#include "core/input_file.h"
#include "core/mlir_to_ptx.h"
#include "core/nvjitlink.h"
#include "core/toolkit.h"
#include "core/ptxas.h"

namespace mgpu::core {
namespace {

using Clock = std::chrono::steady_clock;

// MGPU_PTXAS, where set, must name an executable file: a folder or a missing file would have
// made Auto fall back to nvJitLink silently (other kernels: setmaxnreg dropped), and an explicit
// ptxas fail per kernel as a compile error. Error{InvalidInput}: the user's setting to fix.
void check_ptxas_setting() {
  const char* e = std::getenv("MGPU_PTXAS");
  if (!e || !*e) return;
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(e, ec);
  std::string why;
  if (!std::filesystem::exists(st)) why = "there is no such file";
  else if (!std::filesystem::is_regular_file(st)) why = fmt::format("it is {}, not a program", file_type_name(st.type()));
  else if (::access(e, X_OK) != 0) why = "it is not executable";
  if (!why.empty())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("MGPU_PTXAS='{}' cannot be the assembler: {} (set it to ptxas's path, or unset it to use "
                            "the toolkit's)", e, why));
}

// MGPU_CUDA_HOME or CUDA_HOME, where set (and MGPU_PTXAS is not), must be a toolkit with an
// executable bin/ptxas: one naming nothing, a file or an empty folder made Auto fall back to
// nvJitLink without a word, and nvJitLink drops setmaxnreg (round 8, F19).
void check_toolkit_setting() {
  if (const char* p = std::getenv("MGPU_PTXAS"); p && *p) return;  // the assembler is named itself
  const char* name = "MGPU_CUDA_HOME";
  const char* e = std::getenv(name);
  if (!e || !*e) {
    name = "CUDA_HOME";
    e = std::getenv(name);
  }
  if (!e || !*e) return;
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(e, ec);
  std::string why;
  if (!std::filesystem::exists(st)) why = "there is no such folder";
  else if (std::filesystem::is_regular_file(st)) why = "it is a file, not a folder";
  else if (!std::filesystem::is_directory(st)) why = fmt::format("it is {}, not a folder", file_type_name(st.type()));
  else if (const std::string ptxas = std::string(e) + "/bin/ptxas"; ::access(ptxas.c_str(), X_OK) != 0)
    why = "it has no executable bin/ptxas";
  if (!why.empty())
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}='{}' is no CUDA toolkit: {} (set it to the toolkit's folder, or unset it)", name, e, why));
}

// Auto prefers whole-program ptxas: nvJitLink assembles PTX as one of several compilation
// units and then drops every setmaxnreg ("C7504: 'setmaxnreg' ignored to maintain
// compatibility across compilation units"), so the warp-specialized templates' register split
// between producer and consumer warpgroups would never happen. nvJitLink remains the
// fallback where the toolkit's ptxas is missing.
Assembler resolve(Assembler a) {
  check_ptxas_setting();
  check_toolkit_setting();
  if (a != Assembler::Auto) return a;
  std::error_code ec;
  if (std::filesystem::is_regular_file(ptxas_path(), ec)) return Assembler::Ptxas;
  return nvjitlink_available() ? Assembler::NvJitLink : Assembler::Ptxas;
}

std::string assembler_version(Assembler a) {
  return a == Assembler::NvJitLink ? nvjitlink_version() : ptxas_version();
}

void write_text(const std::filesystem::path& p, std::string_view text) {
  errno = 0;
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.flush();
  if (!out) {
    const int err = errno;
    throw Error(ErrorKind::IO, fmt::format("cannot write {}{}", p.string(), err ? fmt::format(": {}", std::strerror(err)) : ""));
  }
}

}  // namespace

Assembler parse_assembler(std::string_view text) {
  if (text == "auto") return Assembler::Auto;
  if (text == "nvjitlink") return Assembler::NvJitLink;
  if (text == "ptxas") return Assembler::Ptxas;
  throw Error(ErrorKind::InvalidInput,
              fmt::format("unknown assembler '{}': choose auto, nvjitlink or ptxas", text));
}

std::string_view to_string(Assembler a) {
  switch (a) {
    case Assembler::Auto: return "auto";
    case Assembler::NvJitLink: return "nvjitlink";
    case Assembler::Ptxas: return "ptxas";
  }
  return "?";
}

CompileOptions CompileOptions::from_environment() {
  CompileOptions o;
  if (const char* d = std::getenv("MGPU_DUMP_TO"); d && *d) {
    // A folder, made now if need be: one that cannot be is the user's to fix (exit 2), not a
    // compile error of each kernel.
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec)) {
      std::filesystem::create_directories(d, ec);
      if (!std::filesystem::is_directory(d))
        throw Error(ErrorKind::InvalidInput,
                    fmt::format("MGPU_DUMP_TO='{}' cannot be the folder for compile dumps: {}", d,
                                ec ? ec.message() : std::string("it is not a folder")));
    }
    o.dump_dir = d;
  }
  tool_time_limit_s();  // a bad MGPU_TOOL_TIMEOUT likewise: before any compile, not as each kernel's failure
  check_ptxas_setting();
  check_toolkit_setting();
  return o;
}

std::string cache_key(std::string_view mlir_text, const ArchSpec& arch, const CompileOptions& options) {
  Assembler a = resolve(options.assembler);
  LoweringOptions lowering;
  lowering.opt_level = options.opt_level;
  llvm::SHA256 h;
  auto field = [&](std::string_view s) {
    h.update(llvm::StringRef(s.data(), s.size()));
    h.update(llvm::StringRef("\0", 1));  // separator: no two field lists hash alike
  };
  field("mgpu-compile-v1");
  field(mlir_text);
  field(arch.name);
  field(std::to_string(options.opt_level));
  field(to_string(a));
  field(nvvm_pipeline(arch, lowering));
  field(LLVM_VERSION_STRING);
  field(assembler_version(a));
  std::array<uint8_t, 32> digest = h.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string kernel_hash(std::string_view ptx) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(ptx.data(), ptx.size()));
  std::array<uint8_t, 32> digest = h.final();
  return llvm::toHex(digest, /*LowerCase=*/true).substr(0, 16);
}

CompileResult compile_module(std::string_view mlir_text, const ArchSpec& arch, const CompileOptions& options) {
  auto t0 = Clock::now();
  CompileResult r;
  r.assembler = resolve(options.assembler);
  bool dumping = !options.dump_dir.empty();
  std::optional<CompileCache> cache;
  if (!options.cache_dir.empty() && !dumping) cache.emplace(options.cache_dir);
  if (cache) {
    r.key = cache_key(mlir_text, arch, options);
    if (auto units = cache->load(r.key)) {
      r.units = std::move(*units);
      r.cache_hit = true;
      r.times.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      return r;
    }
  }

  LoweredPtx lowered = lower_mlir_to_ptx(mlir_text, arch, {.opt_level = options.opt_level,
                                                            .dump_dir = options.dump_dir,
                                                            .source_name = options.source_name});
  r.times.parse_ms = lowered.parse_ms;
  r.times.lower_ms = lowered.lower_ms;
  for (PtxModule& m : lowered.modules) {
    CompiledUnit u;
    u.cubin = r.assembler == Assembler::NvJitLink ? assemble_with_nvjitlink(m.ptx, arch, options.opt_level)
                                                  : assemble_with_ptxas(m.ptx, arch, options.opt_level);
    r.times.assemble_ms += u.cubin.assemble_ms;
    if (dumping)
      write_text(std::filesystem::path(options.dump_dir) / fmt::format("{}.{}.log", m.name, to_string(r.assembler)),
                 u.cubin.log);
    u.module_name = std::move(m.name);
    u.kernels = std::move(m.kernels);
    u.ptx = std::move(m.ptx);
    r.units.push_back(std::move(u));
  }
  if (cache) {
    try {
      cache->store(r.key, r.units);
    } catch (const Error& e) {
      warn_cache_unusable(cache->dir(), e.what());  // the compile itself succeeded
    }
  }
  r.times.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return r;
}

}  // namespace mgpu::core
