#include "core/dynlib.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core {

DynamicLibrary::DynamicLibrary(void* handle, std::string path)
    : handle_(handle), path_(std::move(path)) {}

void DynamicLibrary::Closer::operator()(void* handle) const {
  if (handle) dlclose(handle);
}

DynamicLibrary DynamicLibrary::open(std::span<const std::string> candidates) {
  std::string tried;
  for (const std::string& name : candidates) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary(h, name);
    const char* why = dlerror();
    tried += fmt::format("\n  {}: {}", name, why ? why : "not found");
  }
  throw Error(ErrorKind::Unavailable, fmt::format("could not load a shared library; tried:{}", tried));
}

void* DynamicLibrary::symbol(const char* name) const { return dlsym(handle_.get(), name); }

void* DynamicLibrary::require_symbol(const char* name) const {
  if (void* p = symbol(name)) return p;
  throw Error(ErrorKind::Unavailable, fmt::format("{} has no symbol {}", path_, name));
}

}  // namespace mgpu::core
