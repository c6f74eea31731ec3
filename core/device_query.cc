#include "core/device_query.h"

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/error.h"
#include "core/nvml.h"

namespace mgpu::core {
namespace {

GpuInfo describe(const CudaDriver& drv, int ordinal) {
  const CudaDriverApi& api = drv.api();
  CUdevice dev{};
  drv.check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet", ErrorKind::Unavailable);
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    drv.check(api.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute", ErrorKind::Unavailable);
    return v;
  };
  GpuInfo g;
  g.ordinal = ordinal;
  char name[256] = {};
  drv.check(api.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName", ErrorKind::Unavailable);
  g.name = name;
  g.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  g.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  g.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  g.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  g.smem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  g.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  g.cluster_launch = attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) != 0;
  size_t bytes = 0;
  drv.check(api.cuDeviceTotalMem(&bytes, dev), "cuDeviceTotalMem", ErrorKind::Unavailable);
  g.memory_bytes = static_cast<std::int64_t>(bytes);
  g.arch = arch_for_compute_capability(g.cc_major, g.cc_minor);
  return g;
}

}  // namespace

DeviceReport query_devices() {
  DeviceReport report;
  try {
    const CudaDriver& drv = CudaDriver::get();
    report.driver_cuda_version = drv.version();
    int count = 0;
    drv.check(drv.api().cuDeviceGetCount(&count), "cuDeviceGetCount", ErrorKind::Unavailable);
    for (int i = 0; i < count; ++i) report.gpus.push_back(describe(drv, i));
    if (count == 0) report.unavailable = "the CUDA driver is present but reports no GPU";
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::InvalidInput) throw;  // a driver set up wrongly: said, not taken for "no GPU"
    report.unavailable = e.what();
    return report;
  }
  try {
    report.driver_version = Nvml::get().driver_version();
  } catch (const Error&) {
    // NVML is optional here: the driver's CUDA version above still identifies the driver.
  }
  return report;
}

}  // namespace mgpu::core
