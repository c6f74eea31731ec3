#include "core/sass/nvdisasm.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include "core/error.h"
#include "core/external_tool.h"
#include "core/toolkit.h"

namespace mgpu::core {
namespace {

struct TempFile {  // removed on scope exit, whatever happens
  std::string path;
  explicit TempFile(const char* suffix) {
    llvm::SmallString<128> p;
    if (llvm::sys::fs::createTemporaryFile("mgpu-sass", suffix, p))
      throw Error(ErrorKind::IO, "cannot create a temporary file for nvdisasm");
    path = std::string(p);
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// $MGPU_NVDISASM, where it is set (empty is unset).
std::optional<std::string> setting() {
  const char* e = std::getenv("MGPU_NVDISASM");
  if (!e || !*e) return std::nullopt;
  return std::string(e);
}

// Why `path` cannot be run as a tool: it is missing, a folder or other non-file, or not executable.
std::optional<std::string> why_not_executable(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);  // through symlinks
  if (!std::filesystem::exists(st)) return "names no file";
  if (!std::filesystem::is_regular_file(st)) return "is not a file";
  if (::access(path.c_str(), X_OK) != 0) return "is not executable";
  return std::nullopt;
}

}  // namespace

std::vector<std::string> nvdisasm_candidates() {
  // A tool the user named is the one meant: silently taking another in its place would hide
  // the typo.
  if (std::optional<std::string> chosen = setting()) return *chosen == "off" ? std::vector<std::string>{} : std::vector{*chosen};
  return {cuda_toolkit_root() + "/bin/nvdisasm", std::string(MGPU_SOURCE_DIR) + "/.tools/cuda/bin/nvdisasm"};
}

std::optional<std::string> nvdisasm_setting_problem() {
  std::optional<std::string> chosen = setting();
  if (!chosen || *chosen == "off") return std::nullopt;
  if (std::optional<std::string> why = why_not_executable(*chosen))
    return fmt::format("MGPU_NVDISASM={} {} (set it to nvdisasm's path or to off, or unset it to use the toolkit's)",
                       *chosen, *why);
  return std::nullopt;
}

std::optional<std::string> find_nvdisasm() {
  if (std::optional<std::string> chosen = setting(); chosen && *chosen == "off") return std::nullopt;
  for (const std::string& p : nvdisasm_candidates())
    if (!why_not_executable(p)) return p;
  return std::nullopt;
}

std::string why_no_nvdisasm() {
  if (std::optional<std::string> bad = nvdisasm_setting_problem()) return *bad;
  if (setting() == "off") return "no nvdisasm (MGPU_NVDISASM=off)";
  std::string tried;
  for (const std::string& p : nvdisasm_candidates()) tried += (tried.empty() ? "" : ", ") + p;
  return fmt::format("no nvdisasm (looked for {}; scripts/cuda_tools.sh installs it, or set MGPU_NVDISASM)", tried);
}

std::string disassemble(std::string_view cubin_image) {
  std::optional<std::string> tool = find_nvdisasm();
  if (!tool) throw Error(ErrorKind::Unavailable, why_no_nvdisasm());
  TempFile in(".cubin"), out(".sass");
  {
    std::ofstream f(in.path, std::ios::binary);
    f << cubin_image;
  }
  // -ndf: no dataflow analysis, which only annotates; the listing is the same and each run is
  // ~20% cheaper (0.25 s instead of 0.31 s on a one-instruction cubin: nvdisasm's cost is its start).
  int rc = run_external_tool("nvdisasm", *tool, {*tool, "-c", "-ndf", in.path}, out.path);
  std::ifstream f(out.path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (rc != 0) {
    // nvdisasm names the temporary copy it was given, which is gone by now: say "the cubin".
    std::string said = ss.str();
    for (size_t at; (at = said.find(in.path)) != std::string::npos;) said.replace(at, in.path.size(), "(the cubin)");
    throw Error(ErrorKind::Compile, fmt::format("nvdisasm failed (exit {}):\n{}", rc, said));
  }
  return ss.str();
}

}  // namespace mgpu::core
