#include "core/nvjitlink.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nvJitLink.h>  // types and enums only; the functions are bound at run time

#include "core/dynlib.h"
#include "core/error.h"
#include "core/toolkit.h"

namespace mgpu::core {
namespace {

// nvJitLink.h declares its functions as inline wrappers around versioned symbols; the plain
// names are exported too, and are what we bind at run time.
using Handle = nvJitLinkHandle;

struct Api {
  DynamicLibrary lib;
  int (*create)(Handle*, uint32_t, const char**);
  int (*destroy)(Handle*);
  int (*add_data)(Handle, int, const void*, size_t, const char*);
  int (*complete)(Handle);
  int (*cubin_size)(Handle, size_t*);
  int (*cubin)(Handle, void*);
  int (*error_log_size)(Handle, size_t*);
  int (*error_log)(Handle, char*);
  int (*info_log_size)(Handle, size_t*);
  int (*info_log)(Handle, char*);
  int (*version)(unsigned*, unsigned*);

  explicit Api(DynamicLibrary l) : lib(std::move(l)) {
    create = lib.require<int(Handle*, uint32_t, const char**)>("nvJitLinkCreate");
    destroy = lib.require<int(Handle*)>("nvJitLinkDestroy");
    add_data = lib.require<int(Handle, int, const void*, size_t, const char*)>("nvJitLinkAddData");
    complete = lib.require<int(Handle)>("nvJitLinkComplete");
    cubin_size = lib.require<int(Handle, size_t*)>("nvJitLinkGetLinkedCubinSize");
    cubin = lib.require<int(Handle, void*)>("nvJitLinkGetLinkedCubin");
    error_log_size = lib.require<int(Handle, size_t*)>("nvJitLinkGetErrorLogSize");
    error_log = lib.require<int(Handle, char*)>("nvJitLinkGetErrorLog");
    info_log_size = lib.require<int(Handle, size_t*)>("nvJitLinkGetInfoLogSize");
    info_log = lib.require<int(Handle, char*)>("nvJitLinkGetInfoLog");
    version = lib.require<int(unsigned*, unsigned*)>("nvJitLinkVersion");
  }
};

const Api& api() {
  static std::once_flag once;
  static std::optional<Api> loaded;
  static std::optional<Error> failure;
  std::call_once(once, [] {
    try {
      loaded.emplace(load_runtime_library(RuntimeLibrary::NvJitLink));
    } catch (const Error& e) {
      failure.emplace(e);
    }
  });
  if (failure) throw *failure;
  return *loaded;
}

std::string read_log(const Api& a, Handle h, bool errors) {
  size_t n = 0;
  if ((errors ? a.error_log_size : a.info_log_size)(h, &n) != 0 || n == 0) return {};
  std::string s(n, '\0');
  (errors ? a.error_log : a.info_log)(h, s.data());
  if (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

bool nvjitlink_available() {
  try {
    api();
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string nvjitlink_version() {
  unsigned major = 0, minor = 0;
  api().version(&major, &minor);
  return fmt::format("nvJitLink {}.{}", major, minor);
}

Cubin assemble_with_nvjitlink(std::string_view ptx, const ArchSpec& arch, int opt_level) {
  const Api& a = api();
  std::string arch_opt = fmt::format("-arch={}", arch.name);
  std::string opt = fmt::format("-O{}", opt_level);
  const char* options[] = {arch_opt.c_str(), opt.c_str(), "-verbose"};
  auto t0 = std::chrono::steady_clock::now();
  Handle h = nullptr;
  if (int rc = a.create(&h, 3, options); rc != 0)
    throw Error(ErrorKind::Compile, fmt::format("nvJitLink failed to start for {} (error {})", arch.name, rc));
  struct Destroy {
    const Api& a;
    Handle& h;
    ~Destroy() { a.destroy(&h); }
  } destroy{a, h};

  int rc = a.add_data(h, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), "module.ptx");
  if (rc == 0) rc = a.complete(h);
  if (rc != 0)
    throw Error(ErrorKind::Compile, fmt::format("nvJitLink failed for {} (error {}):\n{}{}", arch.name, rc,
                                                read_log(a, h, true), read_log(a, h, false)));
  Cubin c;
  size_t n = 0;
  a.cubin_size(h, &n);
  c.image.resize(n);
  a.cubin(h, c.image.data());
  c.log = read_log(a, h, false);
  c.kernels = parse_assembler_report(c.log);
  c.assemble_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace mgpu::core
