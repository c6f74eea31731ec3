#include "harness/nightly/pack_suite.h"

#include <dlfcn.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cublaslt.h"
#include "core/cuda_context.h"
#include "core/cuda_driver.h"
#include "core/device_query.h"
#include "core/error.h"
#include "core/external_tool.h"
#include "core/pack_runtime/mgpu_pack.h"
#include "harness/measure/cuda_measurer.h"
#include "harness/measure/trial_record.h"
#include "harness/pack/export_pack.h"
#include "kernels/matmul_problem.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorKind;

// The pack's ABI as this mgpu-bench calls it (core/pack_runtime/mgpu_pack.h).
struct Abi {
  int (*entry_count)(void);
  mgpu_status (*entry)(int, mgpu_pack_entry_info*);
  mgpu_status (*matmul_entry)(int, mgpu_stream, const void*, const void*, void*, int64_t, int64_t, int64_t, mgpu_dtype,
                              mgpu_dtype, mgpu_b_layout, void*, size_t);
  mgpu_status (*entry_workspace_size)(int, int64_t, int64_t, int64_t, mgpu_dtype, mgpu_dtype, mgpu_b_layout, size_t*);
  const char* (*last_error)(void);
  const char* (*status_name)(mgpu_status);
};

// The whole program on PATH, as a shell finds it ("" when none).
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate.string();
  }
  return "";
}

// The log's last lines, the temporary folder (removed when the message is read) named as such
// (round 18, F24).
std::string tail_of(const fs::path& log, int lines, const fs::path& temp) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) {
    for (std::size_t at; (at = line.find(temp.string())) != std::string::npos;)
      line.replace(at, temp.string().size(), "<temporary build folder>");
    all.push_back(line);
  }
  std::string out;
  for (std::size_t i = all.size() > std::size_t(lines) ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n  " + all[i];
  return out;
}

// A temporary folder, removed with everything in it when this goes.
struct TempFolder {
  fs::path path;
  TempFolder() {
    // temp_directory_path() throws for a TMPDIR that is no folder (battery round 18, F15).
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    const char* tmpdir = std::getenv("TMPDIR");
    if (ec)
      throw Error(ErrorKind::Unavailable, fmt::format("cannot build the pack in a temporary folder: TMPDIR='{}' is no "
                                                      "folder ({}): set TMPDIR to one, or give a built libmgpu_pack.so",
                                                      tmpdir ? tmpdir : "", ec.message()));
    std::string pattern = (base / "mgpu-bench-pack-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw Error(ErrorKind::Unavailable, fmt::format("cannot make a temporary folder in {} to build the pack in: {}",
                                                      base.string(), std::strerror(errno)));
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Why the temporary folder could not take the build, or nothing: its file system has no free
// inode, or less room than a build needs (a small pack's build is ~1.6 MB beside the compiler's
// temporaries). Asked only after cmake failed: with 200 KiB free its log was empty, with 80 KiB
// it was CMake's "Configuring incomplete", and the pack was blamed, exit 2 (round 19, F35).
std::optional<std::string> temp_space_trouble(const fs::path& folder) {
  constexpr unsigned long long kBuildNeeds = 4ull << 20;
  struct statvfs v {};
  if (::statvfs(folder.c_str(), &v) != 0) return std::nullopt;
  const bool root = ::geteuid() == 0;
  const unsigned long long free_inodes = root ? v.f_ffree : v.f_favail;
  const unsigned long long free_bytes = static_cast<unsigned long long>(root ? v.f_bfree : v.f_bavail) * v.f_frsize;
  const std::string where = folder.parent_path().string();
  if (v.f_files > 0 && free_inodes == 0) return fmt::format("the temporary folder {} has no free inodes left", where);
  if (free_bytes < kBuildNeeds)
    return fmt::format("the temporary folder {} is full ({} KiB free)", where, free_bytes >> 10);
  return std::nullopt;
}

// Builds the pack folder as a shared library in `into`; returns the library's path.
fs::path build_pack(const fs::path& dir, const fs::path& into) {
  const std::string cmake = on_path("cmake");
  if (cmake.empty())
    throw Error(ErrorKind::Unavailable, fmt::format("building the pack {} needs cmake, which is not on PATH (or give a "
                                                    "built libmgpu_pack.so instead of the folder)", dir.string()));
  const fs::path build = into / "build", log = into / "build.log";
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::vector<std::string>> steps = {
      {cmake, "-S", dir.string(), "-B", build.string(), "-DBUILD_SHARED_LIBS=ON", "-DCMAKE_BUILD_TYPE=Release"},
      {cmake, "--build", build.string(), "--parallel", std::to_string(jobs)}};
  for (const auto& args : steps) {
    const int rc = core::run_external_tool("cmake (building the pack)", cmake, args, log.string());
    if (rc == 0) continue;
    // Measured while the build's files are still there.
    if (const std::optional<std::string> why = temp_space_trouble(into))
      throw Error(ErrorKind::IO, fmt::format("the pack {} could not be built here: {} (TMPDIR picks the folder; a "
                                             "pack's build needs a few MiB there); the pack itself was not judged",
                                             dir.string(), *why));
    throw Error(ErrorKind::InvalidInput, fmt::format("the pack {} does not build (cmake exit {}); the end of its log:{}",
                                                       dir.string(), rc, tail_of(log, 15, into)));
  }
  const fs::path lib = build / "libmgpu_pack.so";
  if (!fs::exists(lib))
    throw Error(ErrorKind::InvalidInput, fmt::format("building the pack {} made no libmgpu_pack.so", dir.string()));
  return lib;
}

template <class Fn>
void resolve(void* lib, const std::string& path, const char* name, Fn& fn) {
  void* symbol = ::dlsym(lib, name);
  if (!symbol)
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is no kernel pack library this mgpu-bench can measure: it has no {} (a pack exported "
                            "by an older mgpu-tune? export it again)", path, name));
  fn = reinterpret_cast<Fn>(symbol);
}

mgpu_dtype pack_dtype(kernels::DType t) {
  return t == kernels::DType::BF16 ? MGPU_BF16 : t == kernels::DType::F16 ? MGPU_F16 : MGPU_F32;
}

}  // namespace

struct KernelPack::Impl {
  std::string library;
  void* handle = nullptr;
  Abi abi{};
  ~Impl() {
    // Never dlclose'd: the pack's runtime keeps loaded modules and a driver handle for the
    // process's life, and its thread-local error would dangle.
  }
};

KernelPack::KernelPack(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelPack::KernelPack(KernelPack&&) noexcept = default;
KernelPack& KernelPack::operator=(KernelPack&&) noexcept = default;
KernelPack::~KernelPack() = default;

KernelPack KernelPack::open(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw Error(ErrorKind::InvalidInput, fmt::format("--pack {}: no such file or folder", path));
  auto impl = std::make_unique<Impl>();
  impl->library = path;
  std::optional<TempFolder> temp;
  if (fs::is_directory(st)) {
    if (!is_pack_folder(path))
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("--pack {} is no kernel pack: it holds no pack's manifest.json (make one with mgpu-tune "
                              "export --format pack -o DIR)", path));
    temp.emplace();
    impl->library = build_pack(path, temp->path).string();
  } else if (!fs::is_regular_file(st)) {
    throw Error(ErrorKind::InvalidInput, fmt::format("--pack {} is neither a pack folder nor a library file", path));
  }
  // A path without a slash would be searched for on the library path: the file named is meant.
  const std::string load = impl->library.find('/') == std::string::npos ? "./" + impl->library : impl->library;
  impl->handle = ::dlopen(load.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle) {
    std::string why = ::dlerror();
    if (temp) {  // built here: the library's path is in a folder about to be removed (round 18, F24)
      for (std::size_t at; (at = why.find(impl->library)) != std::string::npos;)
        why.replace(at, impl->library.size(), "libmgpu_pack.so");
      throw Error(ErrorKind::InvalidInput, fmt::format("--pack {} builds, but its library does not load: {} (is a file "
                                                       "of the pack missing, src/kernels/ or src/?)", path, why));
    }
    throw Error(ErrorKind::InvalidInput, fmt::format("--pack {} cannot be loaded as a library: {}", path, why));
  }
  if (temp) impl->library = path;  // the folder built; the library file goes with the temporary folder
  resolve(impl->handle, path, "mgpu_pack_entry_count", impl->abi.entry_count);
  resolve(impl->handle, path, "mgpu_pack_entry", impl->abi.entry);
  resolve(impl->handle, path, "mgpu_matmul_entry", impl->abi.matmul_entry);
  resolve(impl->handle, path, "mgpu_matmul_entry_workspace_size", impl->abi.entry_workspace_size);
  resolve(impl->handle, path, "mgpu_last_error", impl->abi.last_error);
  resolve(impl->handle, path, "mgpu_status_name", impl->abi.status_name);
  return KernelPack(std::move(impl));
}

const std::string& KernelPack::library() const { return impl_->library; }

std::vector<SuiteEntry> KernelPack::entries() const {
  std::vector<SuiteEntry> out;
  const int n = impl_->abi.entry_count();
  for (int i = 0; i < n; ++i) {
    mgpu_pack_entry_info info{};
    if (impl_->abi.entry(i, &info) != MGPU_OK)
      throw Error(ErrorKind::InvalidInput, fmt::format("--pack {}: entry {} of {} cannot be read: {}", impl_->library, i, n,
                                                       impl_->abi.last_error()));
    // Each string the ABI promises, checked: a library that gives NULL is no pack this reads (a
    // std::string of NULL crashed: round 18, F19).
    for (auto [field, value] : {std::pair{"op", info.op}, {"template_name", info.template_name}, {"arch", info.arch},
                                {"problem_key", info.problem_key}, {"config_json", info.config_json},
                                {"verification", info.verification}, {"source", info.source}})
      if (!value)
        throw Error(ErrorKind::InvalidInput, fmt::format("--pack {}: entry {} has no {} (NULL): not a pack mgpu-tune "
                                                         "exported", impl_->library, i, field));
    if (std::string(info.op) != "matmul") continue;  // the only op a pack holds yet
    SuiteEntry e;
    e.pack_index = i;
    e.template_name = info.template_name;
    e.arch = info.arch;
    e.verification = info.verification;
    e.measured = std::string(info.source) == "cuda";
    try {
      e.problem = problem_record(kernels::parse_matmul_key(info.problem_key));
      e.config = core::TuningConfig::from_json(info.config_json);
    } catch (const Error& x) {
      throw Error(ErrorKind::InvalidInput, fmt::format("--pack {}: entry {}: {}", impl_->library, i, x.what()));
    }
    e.name = fmt::format("pack/{}/{}", e.template_name, e.problem.key);
    for (const SuiteEntry& earlier : out)
      if (earlier.name == e.name) e.name += fmt::format("/entry{}", i);  // a default and a tuned entry of one problem
    out.push_back(std::move(e));
  }
  return out;
}

std::string KernelPack::source_hash(int index) const {
  mgpu_pack_entry_info info{};
  return impl_->abi.entry(index, &info) == MGPU_OK && info.source_hash ? info.source_hash : "";
}

Measurement KernelPack::measure(const SuiteEntry& entry, const StoppingRule& rule, const std::string& timer) const {
  Measurement m;
  m.source = "cuda";
  const Abi& abi = impl_->abi;
  mgpu_pack_entry_info info{};
  if (abi.entry(entry.pack_index, &info) == MGPU_OK && info.kernel_hash) m.kernel_hash = info.kernel_hash;
  const kernels::MatmulProblem p = matmul_problem(entry.problem);
  const mgpu_dtype in = pack_dtype(p.in_dtype), out = pack_dtype(p.out_dtype);
  const mgpu_b_layout layout = p.b_layout == kernels::BLayout::NK ? MGPU_B_NK : MGPU_B_KN;
  auto failed = [&](mgpu_status s, const char* call) {
    return Error(ErrorKind::Launch, fmt::format("{}: {}: {}", call, abi.status_name(s), abi.last_error()));
  };
  try {
    core::CudaContext& ctx = core::CudaContext::primary();
    const core::GpuInfo gpu = core::query_devices().gpus.at(0);
    const int in_bytes = kernels::size_in_bytes(p.in_dtype), out_bytes = kernels::size_in_bytes(p.out_dtype);
    kernels::MatmulInputs x = kernels::matmul_inputs(p);
    core::DeviceBuffer da(x.a.size() * in_bytes), db(x.b.size() * in_bytes), dc(p.m * p.n * out_bytes),
        flush(2 * gpu.l2_bytes);
    da.upload(std::as_bytes(std::span(x.a)));
    db.upload(std::as_bytes(std::span(x.b)));
    std::size_t need = 0;
    if (mgpu_status s = abi.entry_workspace_size(entry.pack_index, p.m, p.n, p.k, in, out, layout, &need); s != MGPU_OK)
      throw failed(s, "mgpu_matmul_entry_workspace_size");
    core::DeviceBuffer ws(std::max<std::size_t>(need, 256));
    auto launch = [&] {
      const mgpu_status s = abi.matmul_entry(entry.pack_index, nullptr, reinterpret_cast<const void*>(da.ptr()),
                                             reinterpret_cast<const void*>(db.ptr()), reinterpret_cast<void*>(dc.ptr()),
                                             p.m, p.n, p.k, in, out, layout, reinterpret_cast<void*>(ws.ptr()), need);
      if (s != MGPU_OK) throw failed(s, "mgpu_matmul_entry");
    };
    dc.fill_bytes(0xFF);  // NaN poison: an element the kernel misses cannot pass
    launch();
    ctx.synchronize();
    core::DeviceBuffer ref(p.m * p.n * 4);
    core::CublasLt::get().matmul_reference(da.ptr(), db.ptr(), ref.ptr(), p.m, p.n, p.k, p.b_layout == kernels::BLayout::NK,
                                           p.in_dtype == kernels::DType::BF16);
    std::vector<std::uint8_t> got(p.m * p.n * out_bytes);
    std::vector<float> want(p.m * p.n);
    dc.download(std::as_writable_bytes(std::span(got)));
    ref.download(std::as_writable_bytes(std::span(want)));
    if (!judge_verification(m, kernels::relative_error(got, p.out_dtype, want), p.out_dtype, "cuBLASLt")) return m;
    time_kernel(m, launch, rule, flush, timer);
    return m;
  } catch (const core::CudaError& e) {
    m.status = e.is_fault() ? TrialStatus::Fault : TrialStatus::LaunchError;
    m.message = e.what();
  } catch (const Error& e) {
    m.status = TrialStatus::LaunchError;
    m.message = e.what();
  }
  return m;
}

}  // namespace mgpu::harness
