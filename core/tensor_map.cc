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

namespace {
CUtensorMapDataType data_type(TmaElement e) {
  return e == TmaElement::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
         : e == TmaElement::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}
CUtensorMapSwizzle swizzle_mode(ir::Swizzle s) {
  return s == ir::Swizzle::B128  ? CU_TENSOR_MAP_SWIZZLE_128B
         : s == ir::Swizzle::B64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : s == ir::Swizzle::B32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                 : CU_TENSOR_MAP_SWIZZLE_NONE;
}
}  // namespace

void validate_tensor_map(const TensorMapND& t) {
  auto bad = [](const std::string& why) { throw Error(ErrorKind::InvalidInput, "TMA descriptor: " + why); };
  if (t.rank < 1 || t.rank > 5) bad(fmt::format("rank {} is outside [1, 5]", t.rank));
  if (t.base % 16 != 0) bad(fmt::format("base address {:#x} is not 16-byte aligned", t.base));
  std::uint64_t extent = std::uint64_t(element_bytes(t.element));
  for (int i = 0; i < t.rank; ++i) {
    if (t.dims[i] == 0) bad("tensor dimensions must be positive");
    if (t.box[i] < 1 || t.box[i] > 256) bad(fmt::format("box side {} of dimension {} is outside [1, 256]", t.box[i], i));
    if (i > 0) {
      const std::uint64_t stride = t.strides_bytes[i - 1];
      if (stride % 16 != 0) bad(fmt::format("stride {} bytes of dimension {} is not a multiple of 16", stride, i));
      if (stride < extent) bad(fmt::format("stride {} bytes of dimension {} is shorter than the dimension inside it", stride, i));
      extent = stride * t.dims[i];
    } else {
      extent *= t.dims[0];
    }
  }
  const std::uint64_t inner_bytes = std::uint64_t(t.box[0]) * element_bytes(t.element);
  if (inner_bytes % 16 != 0) bad(fmt::format("box inner extent {} bytes is not a multiple of 16", inner_bytes));
  if (t.swizzle != ir::Swizzle::None && inner_bytes > std::uint64_t(t.swizzle))
    bad(fmt::format("box inner extent {} bytes exceeds the {}-byte swizzle span", inner_bytes, int(t.swizzle)));
}

CUtensorMap encode_tensor_map(const TensorMapND& t) {
  validate_tensor_map(t);
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], elem_strides[5];
  for (int i = 0; i < t.rank; ++i) {
    dims[i] = t.dims[i];
    box[i] = t.box[i];
    elem_strides[i] = 1;
    if (i > 0) strides[i - 1] = t.strides_bytes[i - 1];
  }
  CUtensorMap map{};
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuTensorMapEncodeTiled(&map, data_type(t.element), static_cast<cuuint32_t>(t.rank),
                                             reinterpret_cast<void*>(t.base), dims, strides, box, elem_strides,
                                             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(t.swizzle),
                                             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "cuTensorMapEncodeTiled", ErrorKind::InvalidInput);
  return map;
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
