// TMA descriptors (CUtensorMap) for row-major 2-D tensors, encoded on the host with
// cuTensorMapEncodeTiled. Contract: validate_tensor_map_2d() checks what the hardware
// requires (16-byte aligned base and row stride, box sides in [1, 256], an inner box no wider
// than the swizzle span) and throws Error{InvalidInput} naming the rule broken -- it needs no
// GPU, so templates can reject configs early; encode_tensor_map_2d() validates, then encodes.
// Out-of-bounds elements of a box read as zero and are not written, which is how ragged
// edges are handled.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "core/ir/tile_types.h"

namespace mgpu::core {

enum class TmaElement { BF16, F16, F32 };

struct TensorMap2D {
  std::uint64_t base = 0;      // device address
  TmaElement element = TmaElement::BF16;
  std::uint64_t rows = 0;      // outer dimension
  std::uint64_t cols = 0;      // inner (contiguous) dimension
  std::uint64_t row_stride_bytes = 0;
  std::uint32_t box_rows = 0;
  std::uint32_t box_cols = 0;
  ir::Swizzle swizzle = ir::Swizzle::B128;
};

// A tensor of rank 1-5 (innermost dimension first): what a kernel whose boxes span more than
// rows and columns takes, e.g. attention's [batch][seq][heads][head_dim], where a box that
// stops at one batch's sequence end reads zeros instead of the next batch's rows.
struct TensorMapND {
  std::uint64_t base = 0;
  TmaElement element = TmaElement::BF16;
  int rank = 2;
  std::uint64_t dims[5] = {};
  std::uint64_t strides_bytes[4] = {};  // of dims 1..rank-1 (dim 0 is contiguous)
  std::uint32_t box[5] = {};
  ir::Swizzle swizzle = ir::Swizzle::B128;
};

int element_bytes(TmaElement e);
void validate_tensor_map_2d(const TensorMap2D& t);
CUtensorMap encode_tensor_map_2d(const TensorMap2D& t);
// The same rules for rank 1-5: 16-byte aligned base and strides, strides at least their inner
// extent, box sides in [1, 256], the inner box within the swizzle span.
void validate_tensor_map(const TensorMapND& t);
CUtensorMap encode_tensor_map(const TensorMapND& t);

}  // namespace mgpu::core
