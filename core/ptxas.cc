#include "core/ptxas.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include "core/error.h"
#include "core/toolkit.h"

namespace mgpu::core {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Temporary files removed on scope exit, whatever happens.
struct TempFile {
  std::string path;
  explicit TempFile(const char* suffix) {
    llvm::SmallString<128> p;
    if (llvm::sys::fs::createTemporaryFile("mgpu-ptxas", suffix, p))
      throw Error(ErrorKind::IO, "cannot create a temporary file for ptxas");
    path = std::string(p);
  }
  ~TempFile() { std::filesystem::remove(path); }
};

}  // namespace

std::map<std::string, KernelResources> parse_ptxas_report(std::string_view log) {
  // ptxas -v prints, per entry:
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
    }
  }
  return out;
}

Cubin assemble_with_ptxas(std::string_view ptx, const ArchSpec& arch, int opt_level) {
  std::string ptxas = ptxas_path();
  if (!std::filesystem::exists(ptxas))
    throw Error(ErrorKind::Unavailable,
                fmt::format("ptxas not found at {} (set MGPU_PTXAS or CUDA_HOME)", ptxas));
  TempFile in(".ptx"), out(".cubin"), log(".log");
  {
    std::ofstream f(in.path, std::ios::binary);
    f << ptx;
  }
  std::string arch_flag = fmt::format("-arch={}", arch.name);
  std::string opt_flag = fmt::format("-O{}", opt_level);
  llvm::StringRef args[] = {ptxas, arch_flag, opt_flag, "-v", in.path, "-o", out.path};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path, log.path};
  std::string err;
  auto t0 = std::chrono::steady_clock::now();
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &err);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string report = read_file(log.path);
  if (rc != 0)
    throw Error(ErrorKind::Compile, fmt::format("ptxas failed for {} (exit {}{}):\n{}", arch.name, rc,
                                                err.empty() ? "" : ", " + err, report));
  Cubin c;
  c.image = read_file(out.path);
  c.log = std::move(report);
  c.kernels = parse_ptxas_report(c.log);
  c.assemble_ms = ms;
  return c;
}

}  // namespace mgpu::core
