// Lowering of an MLIR module holding gpu.module kernels to PTX: the first half of the MGPU
// backend's compile pipeline. No MLIR header leaks from here, so callers stay cheap to build.
// Contract: lower_mlir_to_ptx() parses the text, attaches an #nvvm.target for `arch` to every
// gpu.module (replacing any target already there), runs nvvm_pipeline(), and returns the PTX
// of each gpu.module. Kernel memref arguments use the bare-pointer convention (one pointer per
// memref), which is what the driver-API launcher passes. Text that does not parse throws
// Error{InvalidInput} ("MLIR parse failed: ..."); a failed lowering throws Error{Compile}
// ("MLIR lower failed: ..."); both carry MLIR's diagnostics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/arch.h"

namespace mgpu::core {

struct LoweringOptions {
  int opt_level = 3;     // LLVM NVPTX optimization level
  std::string dump_dir;  // when set: MLIR after each pass and the PTX are written there
  // The file the text was read from, named by diagnostics at its lines ("" for generated text:
  // MLIR calls it "-"). Messages only: the module, its PTX and the cache key do not see it.
  std::string source_name;
};

struct PtxModule {
  std::string name;                  // the gpu.module's symbol name
  std::string ptx;
  std::vector<std::string> kernels;  // gpu.func kernels it defines, in order
};

struct LoweredPtx {
  std::vector<PtxModule> modules;
  double parse_ms = 0;
  double lower_ms = 0;  // passes, including LLVM IR -> PTX
};

// The textual pass pipeline used for `arch` (what `--dump` shows and the cache key hashes).
std::string nvvm_pipeline(const ArchSpec& arch, const LoweringOptions& options);
LoweredPtx lower_mlir_to_ptx(std::string_view mlir_text, const ArchSpec& arch,
                             const LoweringOptions& options = {});

}  // namespace mgpu::core
