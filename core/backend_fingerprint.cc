#include "core/backend_fingerprint.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>

#include "core/mlir_to_ptx.h"
#include "core/nvjitlink.h"
#include "core/ptxas.h"

namespace mgpu::core {

std::string backend_fingerprint(const ArchSpec& arch) {
  std::string assembler = nvjitlink_available() ? nvjitlink_version() : ptxas_version();
  return fmt::format("MLIR {}\n{}\n{}", LLVM_VERSION_STRING, nvvm_pipeline(arch, LoweringOptions{}), assembler);
}

std::string backend_hash(const ArchSpec& arch) {
  std::string f = backend_fingerprint(arch);
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(f));
  return llvm::toHex(digest, /*LowerCase=*/true).substr(0, 16);
}

}  // namespace mgpu::core
