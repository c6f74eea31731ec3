#include "core/ptxas.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
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
  c.kernels = parse_assembler_report(c.log);
  c.assemble_ms = ms;
  return c;
}

std::string ptxas_version() {
  static const std::string version = [] {
    std::string ptxas = ptxas_path();
    TempFile out(".txt");
    llvm::StringRef args[] = {ptxas, "--version"};
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, out.path, out.path};
    if (llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects) != 0) return std::string("unknown");
    std::istringstream lines(read_file(out.path));
    for (std::string line; std::getline(lines, line);)
      if (line.find("release") != std::string::npos) return line;
    return std::string("unknown");
  }();
  return version;
}

}  // namespace mgpu::core
