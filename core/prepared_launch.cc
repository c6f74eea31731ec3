#include "core/prepared_launch.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/tensor_map.h"

namespace mgpu::core {

PreparedLaunch::PreparedLaunch(const BuiltKernel& kernel, std::span<const CUdeviceptr> tensor_bases,
                               std::vector<std::int32_t> scalars, unsigned grid_x, CUdeviceptr workspace)
    : workspace_(workspace), scalars_(std::move(scalars)) {
  if (tensor_bases.size() != kernel.tensor_maps.size())
    throw Error(ErrorKind::InvalidInput, fmt::format("kernel {} takes {} tensors, got {}", kernel.kernel_name,
                                                     kernel.tensor_maps.size(), tensor_bases.size()));
  descriptors_.reserve(kernel.tensor_maps.size());
  for (size_t i = 0; i < kernel.tensor_maps.size(); ++i) {
    TensorMap2D t = kernel.tensor_maps[i];
    t.base = tensor_bases[i];
    CUtensorMap map = encode_tensor_map_2d(t);
    descriptors_.emplace_back(sizeof map).upload(std::as_bytes(std::span(&map, 1)));
  }
  for (const DeviceBuffer& d : descriptors_) descriptor_ptrs_.push_back(d.ptr());
  if (kernel.takes_workspace != (workspace != 0))
    throw Error(ErrorKind::InvalidInput, fmt::format("kernel {} {} a workspace, and {} was given", kernel.kernel_name,
                                                     kernel.takes_workspace ? "takes" : "takes no",
                                                     workspace ? "one" : "none"));
  for (CUdeviceptr& p : descriptor_ptrs_) args_.push_back(&p);
  if (workspace_) args_.push_back(&workspace_);
  for (std::int32_t& s : scalars_) args_.push_back(&s);
  spec_.grid = {grid_x, 1, 1};
  spec_.block = {static_cast<unsigned>(kernel.block_threads), 1, 1};
  spec_.cluster = {static_cast<unsigned>(kernel.cluster_size), 1, 1};
  spec_.dynamic_smem_bytes = static_cast<unsigned>(kernel.dynamic_smem_bytes);
}

std::optional<DeviceBuffer> zeroed_workspace(std::int64_t bytes) {
  if (bytes <= 0) return std::nullopt;
  std::optional<DeviceBuffer> w(std::in_place, static_cast<std::size_t>(bytes));
  w->fill_bytes(0);
  return w;
}

void PreparedLaunch::launch(CUfunction fn, CUstream stream) { core::launch(fn, spec_, args_.data(), stream); }

}  // namespace mgpu::core
