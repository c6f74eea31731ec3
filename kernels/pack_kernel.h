// One compiled kernel as a kernel pack ships it (export --format pack; the pack's C side is
// core/pack_runtime/pack_internal.h's mgpu_pk_kernel): its PTX, which the virtual device loads,
// and its cubin, which a GPU loads; its launch shape; and its TMA descriptors, each described by
// which of the op's sizes give its rows and its contiguous columns, so the pack's runtime
// encodes them for any problem. An op's pack code (kernels/<op>_pack/) fills it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu::kernels {

struct PackMap {
  int element = 0;  // mgpu_dtype: 0 bf16, 1 f16, 2 f32
  int rows_of = 0, cols_of = 0;  // indices into the op's sizes
  std::uint32_t box_rows = 0, box_cols = 0;
  int swizzle_bytes = 0;
};

struct PackKernel {
  std::string name;  // its entry point
  std::string arch;  // "sm_90a"
  int cc_major = 0, cc_minor = 0;
  std::string ptx;
  std::string cubin;
  int block_threads = 0, cluster_size = 1, dynamic_smem_bytes = 0;
  bool takes_workspace = false;
  std::vector<PackMap> maps;
  std::string kernel_hash;  // core::kernel_hash(ptx): what results key verifications by
};

}  // namespace mgpu::kernels
