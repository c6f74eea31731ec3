// The MGPU backend's compile pipeline: MLIR text -> PTX (mlir_to_ptx) -> cubin (ptxas, or
// nvJitLink in process), cached by content. Contract: compile_module() returns one CompiledUnit
// per gpu.module with the cubin, its entry names and resources, and the time of each stage;
// errors name the stage ("parse" -- Error{InvalidInput} --, then Error{Compile} for "lower",
// "nvJitLink", "ptxas").
// The cache key hashes the module text, arch, optimization level, assembler, the exact pass
// pipeline, and the toolchain versions (MLIR, nvJitLink or ptxas), so a change of any of them
// misses. Setting dump_dir turns the cache off for that call (a dump needs a real compile).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/arch.h"
#include "core/compile_cache.h"

namespace mgpu::core {

// Auto: the toolkit's ptxas (whole-program: setmaxnreg survives), else nvJitLink.
enum class Assembler { Auto, NvJitLink, Ptxas };
Assembler parse_assembler(std::string_view text);  // "auto" | "nvjitlink" | "ptxas"
std::string_view to_string(Assembler a);

struct CompileOptions {
  int opt_level = 3;
  Assembler assembler = Assembler::Auto;
  std::string cache_dir;  // empty: no cache
  std::string dump_dir;   // MLIR after each pass, PTX and the assembler log go here
  std::string source_name;  // the user's file the text came from, for messages (not hashed)

  // Defaults from the environment: MGPU_DUMP_TO (dump_dir); the cache stays off.
  static CompileOptions from_environment();
};

struct StageTimes {
  double parse_ms = 0;
  double lower_ms = 0;     // MLIR passes + LLVM NVPTX codegen
  double assemble_ms = 0;  // PTX -> cubin, all units
  double total_ms = 0;     // wall time of the call, cache look-up included
};

struct CompileResult {
  std::vector<CompiledUnit> units;
  StageTimes times;
  bool cache_hit = false;
  std::string key;
  Assembler assembler = Assembler::Auto;  // the one actually used
};

std::string cache_key(std::string_view mlir_text, const ArchSpec& arch, const CompileOptions& options);
// A compiled kernel's identity: the first 16 hex digits of the SHA-256 of its PTX (what the
// virtual device runs and ptxas assembles). Verifications are keyed by it.
std::string kernel_hash(std::string_view ptx);
CompileResult compile_module(std::string_view mlir_text, const ArchSpec& arch,
                             const CompileOptions& options = {});

}  // namespace mgpu::core
