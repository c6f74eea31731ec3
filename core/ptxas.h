// PTX -> cubin through the toolkit's `ptxas`, with its resource report. (nvJitLink, opened at
// run time, joins as the in-process assembler with the compile pipeline; ptxas stays the
// fallback and the reference for resource numbers.)
// Contract: assemble_with_ptxas() runs `ptxas -arch=<arch> -O<n> -v` on the PTX and returns
// the cubin bytes plus one KernelResources per entry function; a non-zero exit throws
// Error{Compile} whose message names the "ptxas" stage and carries its log; a missing ptxas
// throws Error{Unavailable}. parse_ptxas_report() reads the `-v` log alone.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/arch.h"

namespace mgpu::core {

struct KernelResources {
  int registers = 0;
  int shared_static_bytes = 0;  // static .shared; dynamic SMEM is the launcher's business
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int barriers = 0;
};

struct Cubin {
  std::string image;                              // ELF bytes
  std::string log;                                // ptxas's -v report
  std::map<std::string, KernelResources> kernels;  // by entry name
  double assemble_ms = 0;
};

std::map<std::string, KernelResources> parse_ptxas_report(std::string_view log);
Cubin assemble_with_ptxas(std::string_view ptx, const ArchSpec& arch, int opt_level = 3);

}  // namespace mgpu::core
