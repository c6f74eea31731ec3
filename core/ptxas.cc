#include "core/ptxas.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include "core/error.h"
#include "core/external_tool.h"
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
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("mgpu-ptxas", suffix, p)) {
      llvm::SmallString<128> dir;
      llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
      throw Error(ErrorKind::IO, fmt::format("cannot create a temporary file for ptxas in {} ({}; TMPDIR picks the "
                                             "folder)", std::string(dir), ec.message()));
    }
    path = std::string(p);
  }
  ~TempFile() { std::filesystem::remove(path); }
};

}  // namespace

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
  auto t0 = std::chrono::steady_clock::now();
  int rc = run_external_tool("ptxas", ptxas, {ptxas, arch_flag, opt_flag, "-v", in.path, "-o", out.path}, log.path);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string report = read_file(log.path);
  if (rc != 0)
    throw Error(ErrorKind::Compile, fmt::format("ptxas failed for {} (exit {}):\n{}", arch.name, rc, report));
  Cubin c;
  c.image = read_file(out.path);
  // An assembler that says it succeeded but wrote no cubin, or something that is no ELF file,
  // is a broken tool (the machine's failure): never a kernel that "built" with 0 registers.
  if (c.image.empty())
    throw Error(ErrorKind::Unavailable,
                fmt::format("ptxas {} exited 0 but wrote no cubin for {} (a broken assembler; set MGPU_PTXAS or "
                            "CUDA_HOME to a working one)",
                            ptxas, arch.name));
  if (c.image.size() < 64 || c.image.compare(0, 4, "\x7f" "ELF") != 0)
    throw Error(ErrorKind::Unavailable,
                fmt::format("ptxas {} exited 0 but what it wrote for {} is no cubin ({} bytes, not an ELF file; a "
                            "broken assembler; set MGPU_PTXAS or CUDA_HOME to a working one)",
                            ptxas, arch.name, c.image.size()));
  c.log = std::move(report);
  c.kernels = parse_assembler_report(c.log);
  // `ptxas -v` reports every entry it assembled; one it does not is a report we cannot read.
  static const std::regex entry(R"(\.entry\s+([\w$.]+))");
  const std::string text(ptx);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it)
    if (!c.kernels.count((*it)[1].str()))
      throw Error(ErrorKind::Unavailable,
                  fmt::format("ptxas {} assembled {} but its -v report names no resources for kernel {} (a broken or "
                              "unknown assembler; set MGPU_PTXAS or CUDA_HOME to a working one)",
                              ptxas, arch.name, (*it)[1].str()));
  c.assemble_ms = ms;
  return c;
}

std::string ptxas_version() {
  static const std::string version = [] {
    std::string ptxas = ptxas_path();
    TempFile out(".txt");
    // A ptxas that hangs or cannot run has no version to tell; the compile that follows says why.
    try {
      if (run_external_tool("ptxas --version", ptxas, {ptxas, "--version"}, out.path,
                            std::min(30.0, tool_time_limit_s())) != 0) return std::string("unknown");
    } catch (const Error&) {
      return std::string("unknown");
    }
    std::istringstream lines(read_file(out.path));
    for (std::string line; std::getline(lines, line);)
      if (line.find("release") != std::string::npos) return line;
    return std::string("unknown");
  }();
  return version;
}

}  // namespace mgpu::core
