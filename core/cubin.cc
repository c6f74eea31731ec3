#include "core/cubin.h"

#include <regex>
#include <sstream>

namespace mgpu::core {

std::map<std::string, KernelResources> parse_assembler_report(std::string_view log) {
  // Per entry the report holds (nvJitLink prefixes "ptxas" and may add its own summary lines,
  // which name functions in quotes and so do not match `props`):
  //   ptxas info    : Function properties for NAME
  //       S bytes stack frame, SS bytes spill stores, SL bytes spill loads
  //   ptxas info    : Used R registers, used B barriers, [N bytes smem,] C bytes cmem[0]
  static const std::regex props(R"(Function properties for ([\w$.]+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, KernelResources> out;
  KernelResources* current = nullptr;
  std::istringstream lines{std::string(log)};
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, props)) {
      current = &out[m[1]];
    } else if (current && std::regex_search(line, m, frame)) {
      current->stack_bytes = std::stoi(m[1]);
      current->spill_store_bytes = std::stoi(m[2]);
      current->spill_load_bytes = std::stoi(m[3]);
    } else if (current && std::regex_search(line, m, used)) {
      current->registers = std::stoi(m[1]);
      if (std::regex_search(line, m, barriers)) current->barriers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) current->shared_static_bytes = std::stoi(m[1]);
      current = nullptr;  // the "Used" line closes the entry
    }
  }
  return out;
}

}  // namespace mgpu::core
