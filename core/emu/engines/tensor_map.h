// TMA tensor maps as the virtual device encodes them into the opaque 128-byte CUtensorMap
// (CUDA Driver API "cuTensorMapEncodeTiled"; PTX ISA 5.5 "Tensors"). Contract: encode()
// checks what the driver documents (rank 1-5, 16-byte aligned address and strides, strides a
// multiple of 16 and < 2^40, box sides 1-256, element strides 1-8, inner box bytes a multiple
// of 16 and no wider than the swizzle span, interleave none, NaN OOB fill only for float
// types; elementStrides[0] is ignored as the driver ignores it) and returns an error text
// instead of encoding a map the hardware would reject. for_each_box_element() walks a box in
// shared-memory order, which is how loads and stores move bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/emu/engines/smem_layout.h"

namespace mgpu::emu {

struct TensorMap {
  std::uint32_t rank = 0;
  std::uint32_t elem_bytes = 0;
  std::uint32_t dtype = 0;            // CUtensorMapDataType as given
  std::uint64_t base = 0;
  std::uint64_t dims[5] = {1, 1, 1, 1, 1};
  std::uint64_t strides[5] = {0, 0, 0, 0, 0};  // bytes; strides[0] = element size
  std::uint32_t box[5] = {1, 1, 1, 1, 1};
  std::uint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  Swizzle swizzle = Swizzle::None;
  bool oob_nan = false;               // CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA

  // Elements of the box along dimension i as stored in shared memory.
  std::uint32_t box_extent(int i) const { return (box[i] + elem_strides[i] - 1) / elem_strides[i]; }
  std::uint64_t box_bytes() const;
};

inline constexpr std::uint32_t kTensorMapMagic = 0x4D475055;  // "MGPU"

// CUtensorMap (128 bytes, 64-byte aligned) <-> TensorMap.
std::string encode_tensor_map(void* out128, std::uint32_t dtype, std::uint32_t rank, std::uint64_t base,
                              const std::uint64_t* dims, const std::uint64_t* strides /* rank-1 */,
                              const std::uint32_t* box, const std::uint32_t* elem_strides,
                              std::uint32_t interleave, std::uint32_t swizzle /* CUtensorMapSwizzle */,
                              std::uint32_t oob_fill);
bool decode_tensor_map(const void* in128, TensorMap& out);
std::uint32_t tensor_map_elem_bytes(std::uint32_t dtype);  // 0 for unknown

// Calls f(smem_offset_from_box_start_unswizzled, global_address, in_bounds) for every element
// of the box at `coords` (signed element coordinates), in shared-memory order.
void for_each_box_element(const TensorMap& m, const std::int32_t* coords,
                          const std::function<void(std::uint32_t, std::uint64_t, bool)>& f);

}  // namespace mgpu::emu
