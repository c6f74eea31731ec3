#include "core/cuda_kernel.h"

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/error.h"

namespace mgpu::core {

LoadedModule::LoadedModule(const std::string& cubin) {
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
}

LoadedModule::~LoadedModule() {
  if (module_) CudaDriver::get().api().cuModuleUnload(module_);
}

CUfunction LoadedModule::function(const std::string& name) const {
  const CudaDriver& drv = CudaDriver::get();
  CUfunction fn{};
  drv.check(drv.api().cuModuleGetFunction(&fn, module_, name.c_str()), fmt::format("cuModuleGetFunction({})", name));
  return fn;
}

void launch(CUfunction fn, const LaunchSpec& spec, void** args, CUstream stream) {
  const CudaDriver& drv = CudaDriver::get();
  const CudaDriverApi& api = drv.api();
  drv.check(api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(spec.dynamic_smem_bytes)),
            fmt::format("cuFuncSetAttribute(max dynamic SMEM = {} bytes)", spec.dynamic_smem_bytes));
  unsigned cluster_size = spec.cluster[0] * spec.cluster[1] * spec.cluster[2];
  if (cluster_size > 8)
    drv.check(api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
              "cuFuncSetAttribute(non-portable cluster size)");

  CUlaunchAttribute attrs[1] = {};
  CUlaunchConfig cfg = {};
  cfg.gridDimX = spec.grid[0];
  cfg.gridDimY = spec.grid[1];
  cfg.gridDimZ = spec.grid[2];
  cfg.blockDimX = spec.block[0];
  cfg.blockDimY = spec.block[1];
  cfg.blockDimZ = spec.block[2];
  cfg.sharedMemBytes = spec.dynamic_smem_bytes;
  cfg.hStream = stream;
  if (cluster_size > 1) {
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = spec.cluster[0];
    attrs[0].value.clusterDim.y = spec.cluster[1];
    attrs[0].value.clusterDim.z = spec.cluster[2];
    cfg.attrs = attrs;
    cfg.numAttrs = 1;
  }
  drv.check(api.cuLaunchKernelEx(&cfg, fn, args, nullptr),
            fmt::format("cuLaunchKernelEx(grid {}x{}x{}, block {}, cluster {}, {} B SMEM)", spec.grid[0], spec.grid[1],
                        spec.grid[2], spec.block[0], cluster_size, spec.dynamic_smem_bytes));
}

const std::string& loadable_image(const std::string& ptx, const std::string& cubin) {
  return CudaDriver::get().emulated() ? ptx : cubin;
}

}  // namespace mgpu::core
