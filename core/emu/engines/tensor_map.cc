#include "core/emu/engines/tensor_map.h"

#include <cstring>

namespace mgpu::emu {

namespace {

// The layout we store in the opaque CUtensorMap bytes.
struct Packed {
  std::uint32_t magic;
  std::uint8_t rank, swizzle, oob_nan, elem_bytes;
  std::uint32_t dtype;
  std::uint32_t box[5];
  std::uint8_t elem_strides[5];
  std::uint8_t pad[3];
  std::uint64_t base;
  std::uint64_t dims[5];
  std::uint64_t strides[4];
};
static_assert(sizeof(Packed) <= 128, "CUtensorMap is 128 bytes");

}  // namespace

std::uint32_t tensor_map_elem_bytes(std::uint32_t dtype) {
  // CUtensorMapDataType: UINT8 0, UINT16 1, UINT32 2, INT32 3, UINT64 4, INT64 5, FLOAT16 6,
  // FLOAT32 7, FLOAT64 8, BFLOAT16 9, FLOAT32_FTZ 10, TFLOAT32 11, TFLOAT32_FTZ 12.
  static const std::uint32_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return dtype < sizeof(bytes) / sizeof(bytes[0]) ? bytes[dtype] : 0;
}

std::uint64_t TensorMap::box_bytes() const {
  std::uint64_t n = elem_bytes;
  for (std::uint32_t i = 0; i < rank; ++i) n *= box_extent(static_cast<int>(i));
  return n;
}

std::string encode_tensor_map(void* out128, std::uint32_t dtype, std::uint32_t rank, std::uint64_t base,
                              const std::uint64_t* dims, const std::uint64_t* strides,
                              const std::uint32_t* box, const std::uint32_t* elem_strides,
                              std::uint32_t interleave, std::uint32_t swizzle, std::uint32_t oob_fill) {
  std::uint32_t eb = tensor_map_elem_bytes(dtype);
  if (!eb) return "unsupported tensor data type " + std::to_string(dtype);
  if (rank < 1 || rank > 5) return "tensor rank " + std::to_string(rank) + " is not in [1, 5]";
  if (base % 16) return "global address is not 16-byte aligned";
  if (interleave != 0) return "interleaved layouts are not supported by the virtual device";
  if (swizzle > 3) return "unknown swizzle mode " + std::to_string(swizzle);
  // cuda.h: oobFill is CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (0) or _NAN_REQUEST_ZERO_FMA (1), and
  // "NAN_REQUEST_ZERO_FMA can only be used when tensorDataType represents a floating-point data
  // type" (FLOAT16 6 .. TFLOAT32_FTZ 12).
  if (oob_fill > 1) return "unknown oobFill mode " + std::to_string(oob_fill);
  if (oob_fill == 1 && dtype < 6)
    return "oobFill NAN_REQUEST_ZERO_FMA needs a floating-point data type, not type " + std::to_string(dtype);
  for (std::uint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32)) return "globalDim[" + std::to_string(i) + "] is not in [1, 2^32]";
    if (box[i] == 0 || box[i] > 256) return "boxDim[" + std::to_string(i) + "] is not in [1, 256]";
    if (elem_strides[i] == 0 || elem_strides[i] > 8) return "elementStrides[" + std::to_string(i) + "] is not in [1, 8]";
  }
  for (std::uint32_t i = 0; i + 1 < rank; ++i) {
    if (strides[i] % 16) return "globalStrides[" + std::to_string(i) + "] is not a multiple of 16";
    if (strides[i] >= (1ull << 40)) return "globalStrides[" + std::to_string(i) + "] is not below 2^40";
  }
  std::uint32_t inner_bytes = box[0] * eb;
  if (inner_bytes % 16) return "boxDim[0] * element size (" + std::to_string(inner_bytes) + " bytes) is not a multiple of 16";
  // CUtensorMapSwizzle: NONE 0, 32B 1, 64B 2, 128B 3 (same numbering as our Swizzle).
  Swizzle sw = static_cast<Swizzle>(swizzle);
  if (sw != Swizzle::None && inner_bytes > static_cast<std::uint32_t>(swizzle_bytes(sw)))
    return "the inner box (" + std::to_string(inner_bytes) + " bytes) is wider than the " +
           std::to_string(swizzle_bytes(sw)) + "-byte swizzle span";
  Packed p{};
  p.magic = kTensorMapMagic;
  p.rank = static_cast<std::uint8_t>(rank);
  p.swizzle = static_cast<std::uint8_t>(swizzle);
  p.oob_nan = oob_fill == 1;
  p.elem_bytes = static_cast<std::uint8_t>(eb);
  p.dtype = dtype;
  p.base = base;
  for (std::uint32_t i = 0; i < rank; ++i) {
    p.box[i] = box[i];
    // cuda.h: "when interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, the first element of this array
    // is ignored since TMA doesn't support the stride for dimension zero"; PTX ISA 5.5.3.2: "For
    // non-interleaved layout, the traversal stride in dimension 0 must always be 1."
    p.elem_strides[i] = static_cast<std::uint8_t>(i == 0 ? 1 : elem_strides[i]);
    p.dims[i] = dims[i];
    if (i + 1 < rank) p.strides[i] = strides[i];
  }
  std::memset(out128, 0, 128);
  std::memcpy(out128, &p, sizeof p);
  return "";
}

bool decode_tensor_map(const void* in128, TensorMap& m) {
  Packed p;
  std::memcpy(&p, in128, sizeof p);
  if (p.magic != kTensorMapMagic || p.rank < 1 || p.rank > 5) return false;
  m = TensorMap{};
  m.rank = p.rank;
  m.elem_bytes = p.elem_bytes;
  m.dtype = p.dtype;
  m.base = p.base;
  m.swizzle = static_cast<Swizzle>(p.swizzle);
  m.oob_nan = p.oob_nan;
  m.strides[0] = p.elem_bytes;
  for (std::uint32_t i = 0; i < p.rank; ++i) {
    m.dims[i] = p.dims[i];
    m.box[i] = p.box[i];
    m.elem_strides[i] = p.elem_strides[i];
    if (i + 1 < p.rank) m.strides[i + 1] = p.strides[i];
  }
  return true;
}

void for_each_box_element(const TensorMap& m, const std::int32_t* coords,
                          const std::function<void(std::uint32_t, std::uint64_t, bool)>& f) {
  std::uint32_t ext[5];
  for (int i = 0; i < 5; ++i) ext[i] = i < static_cast<int>(m.rank) ? m.box_extent(i) : 1;
  std::uint32_t smem = 0;
  for (std::uint32_t i4 = 0; i4 < ext[4]; ++i4)
    for (std::uint32_t i3 = 0; i3 < ext[3]; ++i3)
      for (std::uint32_t i2 = 0; i2 < ext[2]; ++i2)
        for (std::uint32_t i1 = 0; i1 < ext[1]; ++i1)
          for (std::uint32_t i0 = 0; i0 < ext[0]; ++i0) {
            const std::uint32_t idx[5] = {i0, i1, i2, i3, i4};
            bool in = true;
            std::uint64_t g = m.base;
            for (std::uint32_t d = 0; d < m.rank; ++d) {
              std::int64_t c = static_cast<std::int64_t>(coords[d]) + static_cast<std::int64_t>(idx[d]) * m.elem_strides[d];
              if (c < 0 || c >= static_cast<std::int64_t>(m.dims[d])) in = false;
              else g += static_cast<std::uint64_t>(c) * m.strides[d];
            }
            f(smem, in ? g : 0, in);
            smem += m.elem_bytes;
          }
}

}  // namespace mgpu::emu
