// mgpu_pack_example: every kernel of this pack run through its C ABI (mgpu_pack.h) and checked
// against a CPU reference, on whatever CUDA driver the program finds -- a GPU's libcuda, or the
// one MGPU_CUDA_DRIVER names (mgpu-tune's virtual device: the same program, unchanged).
//   mgpu_pack_example [M N K]
// Each entry of the device's architecture runs at M x N x K (default: the problem it was tuned
// at), forced with mgpu_matmul_entry(); then mgpu_matmul() serves each tuned problem of the
// device's architecture and says how it chose (exact, nearest, default). Entries of another
// architecture are listed as skipped. Exit 0 when every run matched and at least one ran.
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "mgpu_pack.h"

namespace {

struct Driver {
  PFN_cuInit_v2000 cuInit = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuCtxSynchronize_v2000 cuCtxSynchronize = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD = nullptr;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH = nullptr;
  PFN_cuMemsetD8_v3020 cuMemsetD8 = nullptr;
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "mgpu_pack_example: %s\n", why.c_str());
  std::exit(2);
}

void check(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) die(std::string(call) + " failed with CUDA error " + std::to_string(int(r)));
}

// The driver as the pack opens it: $MGPU_CUDA_DRIVER, else libcuda.so.1, every entry point at the
// CUDA version whose prototype is called.
Driver open_driver() {
  const char* path = std::getenv("MGPU_CUDA_DRIVER");
  if (!path || !*path) path = "libcuda.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) die(std::string("cannot load the CUDA driver ") + path + ": " + dlerror());
  PFN_cuGetProcAddress_v12000 get = nullptr;
  void* symbol = dlsym(lib, "cuGetProcAddress_v2");
  std::memcpy(&get, &symbol, sizeof get);
  if (!get) die(std::string(path) + " has no cuGetProcAddress_v2");
  Driver d;
  auto resolve = [&](auto& fn, const char* name, int version) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult found;
    if (get(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || !p)
      die(std::string(path) + " has no " + name);
    std::memcpy(&fn, &p, sizeof p);
  };
  resolve(d.cuInit, "cuInit", 2000);
  resolve(d.cuDeviceGet, "cuDeviceGet", 2000);
  resolve(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
  resolve(d.cuCtxSetCurrent, "cuCtxSetCurrent", 4000);
  resolve(d.cuCtxSynchronize, "cuCtxSynchronize", 2000);
  resolve(d.cuMemAlloc, "cuMemAlloc", 3020);
  resolve(d.cuMemFree, "cuMemFree", 3020);
  resolve(d.cuMemcpyHtoD, "cuMemcpyHtoD", 3020);
  resolve(d.cuMemcpyDtoH, "cuMemcpyDtoH", 3020);
  resolve(d.cuMemsetD8, "cuMemsetD8", 3020);
  return d;
}

// IEEE binary16 and bfloat16 from float, rounding to nearest even (inputs here are finite and
// small), and back.
std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return std::uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float from_f16(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 31, frac = h & 1023;
  const float v = exp == 0 ? std::ldexp(float(frac), -24) : std::ldexp(float(frac | 1024), exp - 25);
  return sign ? -v : v;
}
std::uint16_t to_f16(float f) {  // |f| <= 1 here: never overflowing
  const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const float a = std::fabs(f);
  if (a < 0x1p-14f) return std::uint16_t(sign | std::uint16_t(std::nearbyint(a * 0x1p24f)));  // subnormal
  int e;
  std::frexp(a, &e);  // a = x 2^e, x in [0.5, 1): a's binade is 2^(e-1)
  const int q = int(std::nearbyint(std::ldexp(a, 11 - e)));  // 11 significant bits, ties to even: [1024, 2048]
  return std::uint16_t(sign | (((e - 1 + 15) << 10) + (q - 1024)));  // 2048 carries into the next binade
}

int bytes_of(mgpu_dtype t) { return t == MGPU_F32 ? 4 : 2; }

// "m256_n256_k256_bf16_f32_kn" -> its sizes, dtypes and layout.
bool parse_key(const char* key, std::int64_t* m, std::int64_t* n, std::int64_t* k, mgpu_dtype* in, mgpu_dtype* out,
               mgpu_b_layout* layout) {
  char a[8] = {}, b[8] = {}, l[8] = {};
  if (std::sscanf(key, "m%" SCNd64 "_n%" SCNd64 "_k%" SCNd64 "_%7[a-z0-9]_%7[a-z0-9]_%7[a-z]", m, n, k, a, b, l) != 6)
    return false;
  auto dtype = [](const std::string& s, mgpu_dtype* t) {
    *t = s == "bf16" ? MGPU_BF16 : s == "f16" ? MGPU_F16 : MGPU_F32;
    return s == "bf16" || s == "f16" || s == "f32";
  };
  *layout = std::string(l) == "nk" ? MGPU_B_NK : MGPU_B_KN;
  return dtype(a, in) && dtype(b, out) && (std::string(l) == "kn" || std::string(l) == "nk");
}

struct Buffer {
  const Driver& d;
  CUdeviceptr p = 0;
  Buffer(const Driver& drv, std::size_t bytes) : d(drv) { check(d.cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc"); }
  ~Buffer() { d.cuMemFree(p); }
  void* get() const { return reinterpret_cast<void*>(p); }
};

// One C = A . B through the pack (entry >= 0: forced; else chosen), checked element by element
// against a float64 reference within the output type's rounding (f32 accumulation is far finer).
bool run(const Driver& d, int entry, std::int64_t m, std::int64_t n, std::int64_t k, mgpu_dtype in, mgpu_dtype out,
         mgpu_b_layout layout, std::string* what) {
  std::mt19937 rng(unsigned(m * 31 + n * 7 + k));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto make = [&](std::size_t count) {
    std::vector<std::uint16_t> v(count);
    for (auto& x : v) x = in == MGPU_BF16 ? to_bf16(u(rng)) : to_f16(u(rng));
    return v;
  };
  auto value = [&](std::uint16_t x) { return double(in == MGPU_BF16 ? from_bf16(x) : from_f16(x)); };
  const std::vector<std::uint16_t> a = make(std::size_t(m * k)), b = make(std::size_t(k * n));
  Buffer da(d, a.size() * 2), db(d, b.size() * 2), dc(d, std::size_t(m * n * bytes_of(out)));
  check(d.cuMemcpyHtoD(da.p, a.data(), a.size() * 2), "cuMemcpyHtoD");
  check(d.cuMemcpyHtoD(db.p, b.data(), b.size() * 2), "cuMemcpyHtoD");
  check(d.cuMemsetD8(dc.p, 0xFF, std::size_t(m * n * bytes_of(out))), "cuMemsetD8");  // unwritten reads as NaN
  std::size_t need = 0;
  mgpu_status s = entry >= 0 ? mgpu_matmul_entry_workspace_size(entry, m, n, k, in, out, layout, &need)
                             : mgpu_matmul_workspace_size(m, n, k, in, out, layout, &need);
  if (s != MGPU_OK) return *what = std::string(mgpu_status_name(s)) + ": " + mgpu_last_error(), false;
  Buffer ws(d, need);
  s = entry >= 0 ? mgpu_matmul_entry(entry, nullptr, da.get(), db.get(), dc.get(), m, n, k, in, out, layout, ws.get(), need)
                 : mgpu_matmul(nullptr, da.get(), db.get(), dc.get(), m, n, k, in, out, layout, ws.get(), need);
  if (s != MGPU_OK) return *what = std::string(mgpu_status_name(s)) + ": " + mgpu_last_error(), false;
  check(d.cuCtxSynchronize(), "cuCtxSynchronize");
  std::vector<unsigned char> c(std::size_t(m * n * bytes_of(out)));
  check(d.cuMemcpyDtoH(c.data(), dc.p, c.size()), "cuMemcpyDtoH");
  const double eps = out == MGPU_BF16 ? 0x1p-8 : out == MGPU_F16 ? 0x1p-11 : 0x1p-20;
  double worst = 0;
  std::vector<double> row(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const double x = value(a[std::size_t(i * k + kk)]);
      for (std::int64_t j = 0; j < n; ++j)
        row[std::size_t(j)] += x * value(layout == MGPU_B_KN ? b[std::size_t(kk * n + j)] : b[std::size_t(j * k + kk)]);
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t at = std::size_t(i * n + j);
      double got;
      if (out == MGPU_F32) {
        float f;
        std::memcpy(&f, &c[at * 4], 4);
        got = f;
      } else {
        std::uint16_t h;
        std::memcpy(&h, &c[at * 2], 2);
        got = out == MGPU_BF16 ? from_bf16(h) : from_f16(h);
      }
      const double e = std::fabs(got - row[std::size_t(j)]) / (std::fabs(row[std::size_t(j)]) * eps + 1e-3);
      worst = std::isnan(got) ? INFINITY : std::max(worst, e);
    }
  }
  char text[64];
  std::snprintf(text, sizeof text, "worst error %.3f of the tolerance", worst);
  *what = text;
  return worst <= 1.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t size[3] = {0, 0, 0};
  if (argc == 4) {
    for (int i = 0; i < 3; ++i) {
      char* end = nullptr;
      errno = 0;
      size[i] = std::strtoll(argv[i + 1], &end, 10);
      if (errno || end == argv[i + 1] || *end || size[i] < 1 || size[i] > INT32_MAX)
        die(std::string("M N K must be whole numbers from 1 to 2147483647, not '") + argv[i + 1] + "'");
    }
    // The CPU reference holds A, B and C in host memory: at most 2^28 elements each.
    const double most = double(1 << 28);
    if (double(size[0]) * size[2] > most || double(size[2]) * size[1] > most || double(size[0]) * size[1] > most)
      die("M x K, K x N and M x N must each be at most 2^28 elements (the CPU reference holds them)");
  } else if (argc != 1) {
    die("usage: mgpu_pack_example [M N K]");
  }
  const Driver d = open_driver();
  check(d.cuInit(0), "cuInit");
  CUdevice dev;
  check(d.cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx;
  check(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  int ran = 0, failed = 0, skipped = 0;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, int, int, int>> tuned;
  for (int i = 0; i < mgpu_pack_entry_count(); ++i) {
    mgpu_pack_entry_info info;
    if (mgpu_pack_entry(i, &info) != MGPU_OK) die(mgpu_last_error());
    std::int64_t m, n, k;
    mgpu_dtype in, out;
    mgpu_b_layout layout;
    if (!parse_key(info.problem_key, &m, &n, &k, &in, &out, &layout)) die(std::string("entry problem ") + info.problem_key);
    if (size[0]) m = size[0], n = size[1], k = size[2];
    std::string what;
    const bool ok = run(d, i, m, n, k, in, out, layout, &what);
    if (!ok && what.rfind("MGPU_ERR_NO_KERNEL_FOR_ARCH", 0) == 0) {
      std::printf("entry %d (%s, %s): skipped: %s\n", i, info.template_name, info.arch, what.c_str());
      ++skipped;
      continue;
    }
    std::printf("entry %d (%s, %s, %s, tuned at %s, %s) at %" PRId64 "x%" PRId64 "x%" PRId64 ": %s: %s\n", i,
                info.template_name, info.arch, info.source, info.problem_key, info.verification, m, n, k,
                ok ? "ok" : "FAILED", what.c_str());
    ++ran;
    failed += !ok;
    if (std::strcmp(info.source, "default") != 0) tuned.insert({m, n, k, in, out, layout});
  }
  for (const auto& [m, n, k, in, out, layout] : tuned) {  // the selection a program gets
    int entry = -1;
    const char* how = "";
    const mgpu_dtype i = mgpu_dtype(in), o = mgpu_dtype(out);
    const mgpu_b_layout l = mgpu_b_layout(layout);
    if (mgpu_matmul_select(m, n, k, i, o, l, &entry, &how) != MGPU_OK) die(mgpu_last_error());
    std::string what;
    const bool ok = run(d, -1, m, n, k, i, o, l, &what);
    std::printf("mgpu_matmul %" PRId64 "x%" PRId64 "x%" PRId64 ": entry %d (%s): %s: %s\n", m, n, k, entry, how,
                ok ? "ok" : "FAILED", what.c_str());
    ++ran;
    failed += !ok;
  }
  std::printf("%d runs, %d failed, %d entries of another architecture skipped\n", ran, failed, skipped);
  return failed == 0 && ran > 0 ? 0 : 1;
}
