#include "core/ptxas.h"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

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

std::string temp_folder() {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  return std::string(dir);
}

// Temporary files removed on scope exit, whatever happens.
struct TempFile {
  std::string path;
  explicit TempFile(const char* suffix) {
    llvm::SmallString<128> p;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("mgpu-ptxas", suffix, p))
      throw Error(ErrorKind::IO, fmt::format("cannot create a temporary file for ptxas in {} ({}; TMPDIR picks the "
                                             "folder)", temp_folder(), ec.message()));
    path = std::string(p);
  }
  ~TempFile() { std::filesystem::remove(path); }

  // The whole text or Error{IO}: a full temporary folder or a file-size limit (ulimit -f) cut
  // the file short, and ptxas given a truncated PTX would blame the config for our failure.
  void write(std::string_view text) const {
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool written = f && std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
    int err = errno;
    const bool closed = !f || std::fclose(f) == 0;
    if (written && !closed) err = errno;
    if (!written || !closed) write_failed(err);
  }

 private:
  [[noreturn]] void write_failed(int err) const {
    throw Error(ErrorKind::IO, fmt::format("cannot write a temporary file for ptxas in {} ({}; TMPDIR picks the folder)",
                                           temp_folder(), err ? std::strerror(err) : "writing failed"));
  }
};

// Why ptxas could not write its files (cubin, log) in the temporary folder, or nothing: the
// folder's file system has no free block or inode left, or one of `files` reached the
// process's file-size limit (ulimit -f, inherited by ptxas with SIGXFSZ ignored). Checked
// while the files still exist, since they may be what filled the folder. The machine's
// failure (Error{IO}, env_error for a trial), never the config's.
std::optional<std::string> temp_space_trouble(const std::vector<const TempFile*>& files) {
  const std::string dir = temp_folder();
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) == 0) {
    const bool root = ::geteuid() == 0;
    if (v.f_files > 0 && (root ? v.f_ffree : v.f_favail) == 0)
      return fmt::format("the temporary folder {} has no free inodes left (TMPDIR picks the folder)", dir);
    if (v.f_blocks > 0 && (root ? v.f_bfree : v.f_bavail) == 0)
      return fmt::format("the temporary folder {} is full (TMPDIR picks the folder)", dir);
  }
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    std::error_code ec;
    for (const TempFile* f : files)
      if (std::filesystem::file_size(f->path, ec) >= lim.rlim_cur && !ec)
        return fmt::format("a file ptxas wrote in {} reached the file-size limit of {} bytes (ulimit -f)", dir,
                           static_cast<unsigned long long>(lim.rlim_cur));
  }
  return std::nullopt;
}

}  // namespace

Cubin assemble_with_ptxas(std::string_view ptx, const ArchSpec& arch, int opt_level) {
  std::string ptxas = ptxas_path();
  if (!std::filesystem::exists(ptxas))
    throw Error(ErrorKind::Unavailable,
                fmt::format("ptxas not found at {} (set MGPU_PTXAS or CUDA_HOME)", ptxas));
  TempFile in(".ptx"), out(".cubin"), log(".log");
  in.write(ptx);
  std::string arch_flag = fmt::format("-arch={}", arch.name);
  std::string opt_flag = fmt::format("-O{}", opt_level);
  auto t0 = std::chrono::steady_clock::now();
  int signal = 0;
  int rc = run_external_tool("ptxas", ptxas, {ptxas, arch_flag, opt_flag, "-v", in.path, "-o", out.path}, log.path, -1,
                             &signal);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string report = read_file(log.path);
  // Every way this can fail below, met while the temporary folder was full or a file hit the
  // size limit (a cubin or log missing or cut short, ptxas's exit 255 with an empty log), is
  // that failure of the machine: not the PTX's error, nor a broken assembler.
  auto fail = [&](ErrorKind kind, const std::string& message) {
    if (std::optional<std::string> why = temp_space_trouble({&out, &log}))
      throw Error(ErrorKind::IO, fmt::format("ptxas could not write its output for {}: {}", arch.name, *why));
    throw Error(kind, message);
  };
  // An assembler ended by a signal (the out-of-memory killer's SIGKILL, a crash) or out of
  // memory failed for the machine's reason, not the PTX's: retried by a later run, never stored
  // as the config's compile error (battery round 19, F28).
  if (signal != 0)
    fail(ErrorKind::Unavailable, fmt::format("ptxas was ended by signal {} ({}) for {}: the machine's failure (memory, "
                                             "a crash of the assembler), not the kernel's{}{}",
                                             signal, strsignal(signal), arch.name, report.empty() ? "" : ":\n", report));
  if (rc != 0 && report.find("out of memory") != std::string::npos)
    fail(ErrorKind::Unavailable, fmt::format("ptxas ran out of memory for {} (exit {}): the machine's failure, not the "
                                             "kernel's:\n{}", arch.name, rc, report));
  if (rc != 0) fail(ErrorKind::Compile, fmt::format("ptxas failed for {} (exit {}):\n{}", arch.name, rc, report));
  Cubin c;
  c.image = read_file(out.path);
  // An assembler that says it succeeded but wrote no cubin, or something that is no ELF file,
  // is a broken tool (the machine's failure): never a kernel that "built" with 0 registers.
  if (c.image.empty())
    fail(ErrorKind::Unavailable, fmt::format("ptxas {} exited 0 but wrote no cubin for {} (a broken assembler; set "
                                             "MGPU_PTXAS or CUDA_HOME to a working one)",
                                             ptxas, arch.name));
  if (c.image.size() < 64 || c.image.compare(0, 4, "\x7f" "ELF") != 0)
    fail(ErrorKind::Unavailable,
         fmt::format("ptxas {} exited 0 but what it wrote for {} is no cubin ({} bytes, not an ELF file; a broken "
                     "assembler; set MGPU_PTXAS or CUDA_HOME to a working one)",
                     ptxas, arch.name, c.image.size()));
  c.log = std::move(report);
  c.kernels = parse_assembler_report(c.log);
  // `ptxas -v` reports every entry it assembled; one it does not is a report we cannot read.
  static const std::regex entry(R"(\.entry\s+([\w$.]+))");
  const std::string text(ptx);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it)
    if (!c.kernels.count((*it)[1].str()))
      fail(ErrorKind::Unavailable,
           fmt::format("ptxas {} assembled {} but its -v report names no resources for kernel {} (a broken or unknown "
                       "assembler; set MGPU_PTXAS or CUDA_HOME to a working one)",
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
