// Whether a compile cache folder can be used, and the one warning when it cannot. An
// unusable cache (a read-only home, MGPU_CACHE_DIR naming a file) is the machine's problem,
// not the kernel's: callers warn once and compile without the cache.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace mgpu::core {

// Creates the folder if needed and writes (then removes) a probe file; the reason on failure.
std::optional<std::string> why_cache_unusable(const std::filesystem::path& dir);
// "mgpu-tune: warning: the compile cache DIR cannot be used (WHY): compiling without it" on
// stderr, at most once per process.
void warn_cache_unusable(const std::filesystem::path& dir, const std::string& why);

}  // namespace mgpu::core
