#include "core/cache_usability.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

namespace mgpu::core {

std::optional<std::string> why_cache_unusable(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ec.message();
  if (!std::filesystem::is_directory(dir)) return "not a folder";
  std::filesystem::path probe = dir / fmt::format(".probe.{}", ::getpid());
  {
    std::ofstream out(probe, std::ios::trunc);
    out << "probe";
    out.flush();
    if (!out) return "cannot write files there";
  }
  std::filesystem::remove(probe, ec);
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
