// A content-addressed cache of compiled modules on disk. Contract: the key is a hex SHA-256
// of everything that determines the output (see compiler.h); load() returns the entry or
// nullopt on a miss, and treats an unreadable, truncated or altered file (its content checksum
// disagrees) as a miss, so a damaged entry is recompiled and rewritten; store() writes to a
// temporary file in the same folder and renames it into place, so a concurrent reader sees
// either no entry or a whole one, never half of one. Entries live at DIR/ab/abcdef....mgpu.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/cubin.h"

namespace mgpu::core {

struct CompiledUnit {
  std::string module_name;           // the gpu.module
  std::vector<std::string> kernels;  // its kernels, in order
  std::string ptx;
  Cubin cubin;
};

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // $MGPU_CACHE_DIR, else $XDG_CACHE_HOME/mgpu-tune, else ~/.cache/mgpu-tune.
  static std::filesystem::path default_dir();

  std::optional<std::vector<CompiledUnit>> load(const std::string& key) const;
  void store(const std::string& key, const std::vector<CompiledUnit>& units) const;
  std::filesystem::path path_for(const std::string& key) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace mgpu::core
