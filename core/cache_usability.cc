#include "core/cache_usability.h"

#include <cstdlib>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

namespace mgpu::core {

std::optional<std::string> why_cache_unusable(const std::filesystem::path& dir) {
  std::error_code ec;
  // The default cache lives under $HOME; a HOME that is no folder (a service account's
  // /nonexistent) is not made by us (round 19: the cache created /nonexistent/.cache).
  const char* home = std::getenv("HOME");
  if (home && *home && dir.lexically_normal().string().rfind(std::filesystem::path(home).lexically_normal().string() + "/", 0) == 0 &&
      !std::filesystem::is_directory(home, ec))
    return fmt::format("HOME={} is no folder, and the cache is not made there (set MGPU_CACHE_DIR to one)", home);
  std::filesystem::create_directories(dir, ec);
  if (ec) return ec.message();
  if (!std::filesystem::is_directory(dir)) return "not a folder";
  std::filesystem::path probe = dir / fmt::format(".probe.{}", ::getpid());
  // Written with open()/write()/close() so that the reason (errno) can be told, and removed
  // whether or not the write worked: a full disk must not collect .probe.<pid> files.
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot write files there: {}", std::strerror(errno));
  int err = 0;
  if (::write(fd, "probe", 5) != 5) err = errno ? errno : EIO;
  if (::close(fd) != 0 && err == 0) err = errno;
  std::filesystem::remove(probe, ec);
  if (err != 0) return fmt::format("cannot write files there: {}", std::strerror(err));
  return std::nullopt;
}

void warn_cache_unusable(const std::filesystem::path& dir, const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr, "mgpu-tune: warning: the compile cache %s cannot be used (%s): compiling without it\n",
                 dir.string().c_str(), why.c_str());
  });
}

}  // namespace mgpu::core
