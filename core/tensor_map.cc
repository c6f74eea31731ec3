#include "core/tensor_map.h"

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/error.h"

namespace mgpu::core {

int element_bytes(TmaElement e) { return e == TmaElement::F32 ? 4 : 2; }

void validate_tensor_map_2d(const TensorMap2D& t) {
  auto bad = [](const std::string& why) { throw Error(ErrorKind::InvalidInput, "TMA descriptor: " + why); };
  if (t.base % 16 != 0) bad(fmt::format("base address {:#x} is not 16-byte aligned", t.base));
  if (t.rows == 0 || t.cols == 0) bad("tensor dimensions must be positive");
  if (t.row_stride_bytes % 16 != 0)
    bad(fmt::format("row stride {} bytes is not a multiple of 16 (pad the inner dimension)", t.row_stride_bytes));
  if (t.row_stride_bytes < t.cols * element_bytes(t.element)) bad("row stride is shorter than a row");
  if (t.box_rows < 1 || t.box_rows > 256 || t.box_cols < 1 || t.box_cols > 256)
    bad(fmt::format("box {}x{} has a side outside [1, 256]", t.box_rows, t.box_cols));
  std::uint64_t inner_bytes = std::uint64_t(t.box_cols) * element_bytes(t.element);
  if (inner_bytes % 16 != 0) bad(fmt::format("box inner extent {} bytes is not a multiple of 16", inner_bytes));
  if (t.swizzle != ir::Swizzle::None && inner_bytes > std::uint64_t(t.swizzle))
    bad(fmt::format("box inner extent {} bytes exceeds the {}-byte swizzle span", inner_bytes, int(t.swizzle)));
}

CUtensorMap encode_tensor_map_2d(const TensorMap2D& t) {
  validate_tensor_map_2d(t);
  CUtensorMapDataType dtype = t.element == TmaElement::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                              : t.element == TmaElement::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  CUtensorMapSwizzle swizzle = t.swizzle == ir::Swizzle::B128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : t.swizzle == ir::Swizzle::B64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : t.swizzle == ir::Swizzle::B32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                                 : CU_TENSOR_MAP_SWIZZLE_NONE;
  cuuint64_t dims[2] = {t.cols, t.rows};
  cuuint64_t strides[1] = {t.row_stride_bytes};  // the innermost stride is implied
  cuuint32_t box[2] = {t.box_cols, t.box_rows};
  cuuint32_t elem_strides[2] = {1, 1};
  CUtensorMap map{};
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuTensorMapEncodeTiled(&map, dtype, 2, reinterpret_cast<void*>(t.base), dims, strides, box,
                                             elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "cuTensorMapEncodeTiled", ErrorKind::InvalidInput);
  return map;
}

}  // namespace mgpu::core
