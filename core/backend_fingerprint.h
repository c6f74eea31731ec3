// What identifies the compiler a kernel went through: MLIR/LLVM version, the pass pipeline for
// the arch, and the assembler's version. Results record its hash as the template's
// "backend_hash": a toolchain change makes earlier rows stale, as a template change does.
#pragma once

#include <string>

#include "core/arch.h"

namespace mgpu::core {

std::string backend_fingerprint(const ArchSpec& arch);
std::string backend_hash(const ArchSpec& arch);  // first 16 hex digits of its SHA-256

}  // namespace mgpu::core
