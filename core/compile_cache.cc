#include "core/compile_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace mgpu::core {
namespace {

// File layout: one line of JSON (the header), then the blobs it lists, back to back. Version 2
// adds "sha256", of the blobs and the resources: a file altered in place at the same size (a
// flipped bit, an editor) is found by its content, not only by its length.
constexpr int kFormatVersion = 2;

nlohmann::json resources_to_json(const KernelResources& r) {
  return {{"registers", r.registers},          {"shared_static_bytes", r.shared_static_bytes},
          {"stack_bytes", r.stack_bytes},      {"spill_store_bytes", r.spill_store_bytes},
          {"spill_load_bytes", r.spill_load_bytes}, {"barriers", r.barriers}};
}

KernelResources resources_from_json(const nlohmann::json& j) {
  KernelResources r;
  r.registers = j.at("registers");
  r.shared_static_bytes = j.at("shared_static_bytes");
  r.stack_bytes = j.at("stack_bytes");
  r.spill_store_bytes = j.at("spill_store_bytes");
  r.spill_load_bytes = j.at("spill_load_bytes");
  r.barriers = j.at("barriers");
  return r;
}

// What the checksum covers: every blob and the resources, in the order they are stored.
std::string content_sha256(const std::vector<CompiledUnit>& units) {
  llvm::SHA256 h;
  auto add = [&](const std::string& s) {
    const std::string size = std::to_string(s.size()) + ":";  // lengths too: no two splits hash alike
    h.update(llvm::StringRef(size));
    h.update(llvm::StringRef(s));
  };
  for (const CompiledUnit& u : units) {
    add(u.module_name);
    for (const std::string& k : u.kernels) add(k);
    add(u.ptx);
    add(u.cubin.image);
    add(u.cubin.log);
    for (const auto& [name, r] : u.cubin.kernels) add(name + resources_to_json(r).dump());
  }
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

}  // namespace

std::filesystem::path CompileCache::default_dir() {
  if (const char* d = std::getenv("MGPU_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "mgpu-tune";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "mgpu-tune";
}

std::filesystem::path CompileCache::path_for(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".mgpu");
}

namespace {

// The whole entry, or nothing when it is missing, unreadable or no regular file. A FIFO, a
// device (/dev/zero) or a socket put where an entry belongs is never read: open() with
// O_NONBLOCK does not wait for a writer, and fstat() on that descriptor decides before any
// read (no window between a check and the open). Such an entry is treated as damaged: the
// kernel is recompiled and store() renames a fresh file over it.
std::optional<std::string> read_cache_entry(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    // A file that grows while read (someone appending) is no entry this process wrote.
    if (data.size() > static_cast<size_t>(st.st_size) + (1u << 20)) {
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return data;
}

}  // namespace

std::optional<std::vector<CompiledUnit>> CompileCache::load(const std::string& key) const {
  std::optional<std::string> bytes = read_cache_entry(path_for(key));
  if (!bytes) return std::nullopt;
  std::istringstream in(std::move(*bytes), std::ios::binary);
  try {
    std::string header_line;
    std::getline(in, header_line);
    nlohmann::json header = nlohmann::json::parse(header_line);
    if (header.at("format") != kFormatVersion || header.at("key") != key) return std::nullopt;
    auto read_blob = [&](size_t n) {
      std::string s(n, '\0');
      if (!in.read(s.data(), static_cast<std::streamsize>(n))) throw std::runtime_error("truncated");
      return s;
    };
    std::vector<CompiledUnit> units;
    for (const nlohmann::json& u : header.at("units")) {
      CompiledUnit cu;
      cu.module_name = u.at("module");
      cu.kernels = u.at("kernels").get<std::vector<std::string>>();
      cu.ptx = read_blob(u.at("ptx_bytes"));
      cu.cubin.image = read_blob(u.at("cubin_bytes"));
      cu.cubin.log = read_blob(u.at("log_bytes"));
      for (auto& [name, r] : u.at("resources").items()) cu.cubin.kernels[name] = resources_from_json(r);
      units.push_back(std::move(cu));
    }
    // Bytes after the last blob, or blobs that are not what was written: recompile.
    if (in.peek() != std::char_traits<char>::eof() || header.at("sha256") != content_sha256(units)) return std::nullopt;
    return units;
  } catch (const std::exception&) {
    return std::nullopt;  // damaged entry: recompile and overwrite
  }
}

void CompileCache::store(const std::string& key, const std::vector<CompiledUnit>& units) const {
  std::filesystem::path final_path = path_for(key);
  std::error_code ec;
  std::filesystem::create_directories(final_path.parent_path(), ec);
  if (ec) throw Error(ErrorKind::IO, fmt::format("cannot create cache folder {}: {}", final_path.parent_path().string(), ec.message()));

  nlohmann::json header = {{"format", kFormatVersion}, {"key", key}, {"sha256", content_sha256(units)},
                           {"units", nlohmann::json::array()}};
  for (const CompiledUnit& u : units) {
    nlohmann::json res = nlohmann::json::object();
    for (const auto& [name, r] : u.cubin.kernels) res[name] = resources_to_json(r);
    header["units"].push_back({{"module", u.module_name}, {"kernels", u.kernels},
                               {"ptx_bytes", u.ptx.size()}, {"cubin_bytes", u.cubin.image.size()},
                               {"log_bytes", u.cubin.log.size()}, {"resources", res}});
  }
  // Unique temporary name per process and call, in the same folder so rename() is atomic.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path tmp = final_path;
  tmp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << header.dump() << '\n';
    for (const CompiledUnit& u : units) out << u.ptx << u.cubin.image << u.cubin.log;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw Error(ErrorKind::IO, fmt::format("cannot write cache entry {}", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorKind::IO, fmt::format("cannot move cache entry into {}", final_path.string()));
  }
}

}  // namespace mgpu::core
