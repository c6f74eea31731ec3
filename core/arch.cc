#include "core/arch.h"

#include <array>

#include <fmt/format.h>

#include "core/error.h"

namespace mgpu::core {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kGB = 1000LL * 1000 * 1000;

// Hopper parts. Rates: NVIDIA H100 / H200 Tensor Core GPU datasheets, dense (the datasheets'
// "with sparsity" figures halved). L2: H100 whitepaper (50 MB enabled of GH100's 60 MB); the
// H200 figure is cudaDeviceProp::l2CacheSize as read on an H200 of our device pool (2026-10-28).
constexpr std::array kHopperDevices = {
    DeviceSpec{"H100 SXM", "H100 80GB HBM3", 132, 1980, 989.4, 989.4, 1978.9, 3350.0, 50 * kMiB,
               80 * kGB},
    DeviceSpec{"H200 SXM", "H200", 132, 1980, 989.4, 989.4, 1978.9, 4800.0, 60 * kMiB, 141 * kGB},
    DeviceSpec{"H100 PCIe", "H100 PCIe", 114, 1755, 756.0, 756.0, 1513.0, 2000.0, 50 * kMiB,
               80 * kGB},
};

// Blackwell B200. Rates: NVIDIA HGX/DGX B200 datasheet (8-GPU sparse totals / 8 / 2); SM count
// and L2 as reported by cudaGetDeviceProperties on B200 in public device queries. No B200 is
// reachable from this project: `mgpu-tune devices` shows the real values where one exists.
constexpr std::array kBlackwellDevices = {
    DeviceSpec{"B200", "B200", 148, 1965, 2250.0, 2250.0, 4500.0, 8000.0, 126 * kMiB, 180 * kGB},
};

// Limits: CUDA C++ Programming Guide, "Compute Capabilities" (9.0 and 10.0): 228 KB SMEM per
// SM of which 227 KB per block with opt-in, 64K registers per SM, 255 per thread; cluster size 8
// portable, 16 non-portable. TMEM: PTX ISA 8.6 "Tensor Memory" (512 columns x 128 lanes).
// PTX ISA: sm_90a arrived with PTX 8.0, sm_100a with PTX 8.6 (PTX ISA release notes); both are
// emitted as PTX 8.6, the first with mbarrier.arrive.relaxed, which clustered sm_90a kernels use.
constexpr std::array kArchs = {
    ArchSpec{"sm_90a", "Hopper", 9, 0, 86, 227 * 1024, 228 * 1024, 65536, 255, 1024, 8, 16, 0,
             kHopperDevices},
    ArchSpec{"sm_100a", "Blackwell", 10, 0, 86, 227 * 1024, 228 * 1024, 65536, 255, 1024, 8, 16,
             512, kBlackwellDevices},
};

}  // namespace

const DeviceSpec* ArchSpec::find_device(std::string_view driver_name) const {
  for (const DeviceSpec& d : devices)
    if (driver_name.find(d.match) != std::string_view::npos) return &d;
  return nullptr;
}

std::string ArchSpec::ptx_feature() const { return fmt::format("+ptx{}", min_ptx_isa); }

std::span<const ArchSpec> all_archs() { return kArchs; }

const ArchSpec& parse_arch(std::string_view text) {
  for (const ArchSpec& a : kArchs) {
    std::string_view full = a.name;
    std::string_view short_form = full.substr(0, full.size() - 1);  // drop the trailing 'a'
    if (text == full || text == short_form) return a;
  }
  throw Error(ErrorKind::InvalidInput,
              fmt::format("unknown arch '{}': choose one of {}", text, arch_choices()));
}

const ArchSpec* arch_for_compute_capability(int major, int minor) {
  for (const ArchSpec& a : kArchs)
    if (a.cc_major == major && a.cc_minor == minor) return &a;
  return nullptr;
}

std::string arch_choices() {
  std::string out;
  for (const ArchSpec& a : kArchs) {
    std::string_view full = a.name;
    if (!out.empty()) out += ", ";
    out += fmt::format("{}, {}", full.substr(0, full.size() - 1), full);
  }
  return out;
}

}  // namespace mgpu::core
