// A shared library opened at run time (dlopen), so that nothing the binary links needs a GPU
// driver. Contract: open() tries each candidate in order and throws Error{Unavailable} listing
// every candidate and the loader's reason when none loads; require() throws when a symbol is
// missing. The handle is closed on destruction.
#pragma once

#include <memory>
#include <span>
#include <string>

namespace mgpu::core {

class DynamicLibrary {
 public:
  static DynamicLibrary open(std::span<const std::string> candidates);

  const std::string& path() const { return path_; }
  void* symbol(const char* name) const;  // nullptr when absent

  template <class Fn>
  Fn* require(const char* name) const {
    return reinterpret_cast<Fn*>(require_symbol(name));
  }

 private:
  DynamicLibrary(void* handle, std::string path);
  void* require_symbol(const char* name) const;

  struct Closer {
    void operator()(void* handle) const;
  };
  std::unique_ptr<void, Closer> handle_;
  std::string path_;
};

}  // namespace mgpu::core
