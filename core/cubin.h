// What an assembler produces from PTX: the cubin and, per entry function, the resources the
// assembler reports. Contract: parse_assembler_report() reads the `ptxas -v` lines, which both
// ptxas and nvJitLink (with -verbose) print, and returns one entry per function it names.
#pragma once

#include <map>
#include <string>
#include <string_view>

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
  std::string image;                               // ELF bytes
  std::string log;                                 // the assembler's verbose report
  std::map<std::string, KernelResources> kernels;  // by entry name
  double assemble_ms = 0;
};

std::map<std::string, KernelResources> parse_assembler_report(std::string_view log);

}  // namespace mgpu::core
