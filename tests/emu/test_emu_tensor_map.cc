// Spec-derived tests for core/emu/engines/tensor_map: the validation rules of
// cuTensorMapEncodeTiled (CUDA Driver API doc comment in cuda.h, CUDA 12.x), the encode/decode
// round trip through the opaque 128-byte CUtensorMap, and the box walk of PTX ISA 5.5.3
// "Tiled Mode" (bounding box, traversal stride, out-of-boundary access).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/emu/engines/tensor_map.h"

namespace mgpu::emu {
namespace {

constexpr std::uint32_t kU8 = 0, kU16 = 1, kI32 = 3, kF16 = 6, kF32 = 7, kBF16 = 9, kTF32 = 11;

// A valid 2-D bf16 map (128 x 64 elements, rows of 256 bytes, 64 x 32 box, 128B swizzle) that
// each rule below breaks in exactly one place.
struct Args {
  std::uint32_t dtype = kBF16, rank = 2;
  std::uint64_t base = 0x10000;
  std::uint64_t dims[5] = {128, 64, 1, 1, 1};
  std::uint64_t strides[4] = {256, 256 * 64, 0, 0};
  std::uint32_t box[5] = {64, 32, 1, 1, 1};
  std::uint32_t es[5] = {1, 1, 1, 1, 1};
  std::uint32_t interleave = 0, swizzle = 3, oob = 0;
  alignas(64) unsigned char map[128] = {};
  std::string encode() {
    return encode_tensor_map(map, dtype, rank, base, dims, strides, box, es, interleave, swizzle, oob);
  }
};

TEST(EmuTensorMap, ValidMapEncodes) {
  Args a;
  EXPECT_EQ(a.encode(), "");
}

// "tensorDataType has to be an enum from CUtensorMapDataType" (UINT8 0 .. TFLOAT32_FTZ 12 are
// the byte-sized ones the virtual device supports).
TEST(EmuTensorMap, RejectsUnknownDataType) {
  Args a;
  a.dtype = 99;
  EXPECT_EQ(a.encode(), "unsupported tensor data type 99");
}

TEST(EmuTensorMap, ElementSizesOfDataTypes) {
  // cuda.h CUtensorMapDataType comments: 1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4 bytes.
  const std::uint32_t want[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  for (std::uint32_t t = 0; t < 13; ++t) EXPECT_EQ(tensor_map_elem_bytes(t), want[t]) << t;
  EXPECT_EQ(tensor_map_elem_bytes(13), 0u);  // packed 4-/6-bit types: not supported
}

// "tensorRank must be non-zero and less than or equal to the maximum supported dimensionality of 5".
TEST(EmuTensorMap, RejectsRank) {
  Args a;
  a.rank = 0;
  EXPECT_EQ(a.encode(), "tensor rank 0 is not in [1, 5]");
  a.rank = 6;
  EXPECT_EQ(a.encode(), "tensor rank 6 is not in [1, 5]");
}

// "globalAddress ... must be 16 byte aligned".
TEST(EmuTensorMap, RejectsUnalignedAddress) {
  Args a;
  a.base = 0x10008;
  EXPECT_EQ(a.encode(), "global address is not 16-byte aligned");
}

// Interleaved layouts (CU_TENSOR_MAP_INTERLEAVE_16B/32B) are out of the virtual device's scope.
TEST(EmuTensorMap, RejectsInterleave) {
  Args a;
  a.interleave = 1;
  EXPECT_EQ(a.encode(), "interleaved layouts are not supported by the virtual device");
}

TEST(EmuTensorMap, RejectsUnknownSwizzle) {
  Args a;
  a.swizzle = 7;
  EXPECT_EQ(a.encode(), "unknown swizzle mode 7");
}

// "globalDim ... must be non-zero and less than or equal to 2^32".
TEST(EmuTensorMap, RejectsGlobalDim) {
  Args a;
  a.dims[1] = 0;
  EXPECT_EQ(a.encode(), "globalDim[1] is not in [1, 2^32]");
  a.dims[1] = (1ull << 32) + 1;
  EXPECT_EQ(a.encode(), "globalDim[1] is not in [1, 2^32]");
  a.dims[1] = 1ull << 32;  // the bound itself is allowed
  EXPECT_EQ(a.encode(), "");
}

// "boxDim ... must be non-zero and less than or equal to 256".
TEST(EmuTensorMap, RejectsBoxDim) {
  Args a;
  a.box[1] = 0;
  EXPECT_EQ(a.encode(), "boxDim[1] is not in [1, 256]");
  a.box[1] = 257;
  EXPECT_EQ(a.encode(), "boxDim[1] is not in [1, 256]");
  a.box[1] = 256;
  EXPECT_EQ(a.encode(), "");
}

// "elementStrides ... must be non-zero and less than or equal to 8".
TEST(EmuTensorMap, RejectsElementStrides) {
  Args a;
  a.es[1] = 0;
  EXPECT_EQ(a.encode(), "elementStrides[1] is not in [1, 8]");
  a.es[1] = 9;
  EXPECT_EQ(a.encode(), "elementStrides[1] is not in [1, 8]");
  a.es[1] = 8;
  EXPECT_EQ(a.encode(), "");
  a.es[0] = 9;  // the range applies to every entry, dimension 0 included
  EXPECT_EQ(a.encode(), "elementStrides[0] is not in [1, 8]");
}

// "globalStrides ... must be a multiple of 16 and less than 2^40".
TEST(EmuTensorMap, RejectsGlobalStrides) {
  Args a;
  a.strides[0] = 264;
  EXPECT_EQ(a.encode(), "globalStrides[0] is not a multiple of 16");
  a.strides[0] = 1ull << 40;
  EXPECT_EQ(a.encode(), "globalStrides[0] is not below 2^40");
  a.strides[0] = (1ull << 40) - 16;
  EXPECT_EQ(a.encode(), "");
}

// "When interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, { boxDim[0] * elementSizeInBytes } must be
// a multiple of 16 bytes" (and PTX ISA 5.5.3.1: "Size of each bounding Box must be a multiple of
// 16 bytes").
TEST(EmuTensorMap, RejectsInnerBoxNotMultipleOf16) {
  Args a;
  a.swizzle = 0;
  a.box[0] = 4;  // 8 bytes of bf16
  EXPECT_EQ(a.encode(), "boxDim[0] * element size (8 bytes) is not a multiple of 16");
  a.dtype = kU8;
  a.box[0] = 24;
  EXPECT_EQ(a.encode(), "boxDim[0] * element size (24 bytes) is not a multiple of 16");
  a.box[0] = 16;
  EXPECT_EQ(a.encode(), "");
}

// "When interleave is NONE and swizzle is not NONE, the bounding box inner dimension ... must be
// less than or equal to the swizzle size" (32B <= 32, 64B <= 64, 128B <= 128).
TEST(EmuTensorMap, RejectsInnerBoxWiderThanSwizzleSpan) {
  Args a;
  a.box[0] = 128;  // 256 bytes
  EXPECT_EQ(a.encode(), "the inner box (256 bytes) is wider than the 128-byte swizzle span");
  a.box[0] = 64;
  a.swizzle = 2;
  EXPECT_EQ(a.encode(), "the inner box (128 bytes) is wider than the 64-byte swizzle span");
  a.box[0] = 32;
  EXPECT_EQ(a.encode(), "");
  a.swizzle = 1;
  EXPECT_EQ(a.encode(), "the inner box (64 bytes) is wider than the 32-byte swizzle span");
  a.box[0] = 16;
  EXPECT_EQ(a.encode(), "");
  a.swizzle = 0;
  a.box[0] = 256;  // no swizzle: no span limit
  EXPECT_EQ(a.encode(), "");
}

// "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA can only be used when tensorDataType
// represents a floating-point data type"; oobFill is one of NONE (0), NAN_REQUEST_ZERO_FMA (1).
TEST(EmuTensorMap, RejectsNanFillOnIntegerTypes) {
  Args a;
  a.oob = 1;
  EXPECT_EQ(a.encode(), "");  // bf16
  for (std::uint32_t t : {kF16, kF32, kTF32}) {
    a.dtype = t;
    a.box[0] = 128 / tensor_map_elem_bytes(t);
    EXPECT_EQ(a.encode(), "") << t;
  }
  for (std::uint32_t t : {kU8, kU16, kI32}) {
    a.dtype = t;
    a.box[0] = 128 / tensor_map_elem_bytes(t);
    EXPECT_EQ(a.encode(), "oobFill NAN_REQUEST_ZERO_FMA needs a floating-point data type, not type " +
                              std::to_string(t))
        << t;
  }
  a.dtype = kBF16;
  a.box[0] = 64;
  a.oob = 2;
  EXPECT_EQ(a.encode(), "unknown oobFill mode 2");
}

TEST(EmuTensorMap, EncodeDecodeRoundTrip) {
  Args a;
  a.oob = 1;
  ASSERT_EQ(a.encode(), "");
  TensorMap m;
  ASSERT_TRUE(decode_tensor_map(a.map, m));
  EXPECT_EQ(m.rank, 2u);
  EXPECT_EQ(m.dtype, kBF16);
  EXPECT_EQ(m.elem_bytes, 2u);
  EXPECT_EQ(m.base, 0x10000u);
  EXPECT_EQ(m.dims[0], 128u);
  EXPECT_EQ(m.dims[1], 64u);
  EXPECT_EQ(m.strides[0], 2u);  // element size
  EXPECT_EQ(m.strides[1], 256u);
  EXPECT_EQ(m.box[0], 64u);
  EXPECT_EQ(m.box[1], 32u);
  EXPECT_EQ(m.swizzle, Swizzle::B128);
  EXPECT_TRUE(m.oob_nan);
  EXPECT_EQ(m.box_bytes(), 64u * 32u * 2u);

  // Rank 5 with every field distinct.
  Args b;
  b.dtype = kF32;
  b.rank = 5;
  const std::uint64_t dims[5] = {32, 7, 5, 3, 2};
  const std::uint64_t strides[4] = {128, 128 * 7, 128 * 35, 128 * 105};
  const std::uint32_t box[5] = {32, 4, 3, 2, 1};
  const std::uint32_t es[5] = {1, 2, 3, 1, 1};
  std::memcpy(b.dims, dims, sizeof dims);
  std::memcpy(b.strides, strides, sizeof strides);
  std::memcpy(b.box, box, sizeof box);
  std::memcpy(b.es, es, sizeof es);
  b.swizzle = 0;
  ASSERT_EQ(b.encode(), "");
  ASSERT_TRUE(decode_tensor_map(b.map, m));
  EXPECT_EQ(m.rank, 5u);
  EXPECT_FALSE(m.oob_nan);
  EXPECT_EQ(m.swizzle, Swizzle::None);
  EXPECT_EQ(m.strides[0], 4u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(m.dims[i], dims[i]);
    EXPECT_EQ(m.box[i], box[i]);
    EXPECT_EQ(m.elem_strides[i], es[i]);
    if (i > 0) {
      EXPECT_EQ(m.strides[i], strides[i - 1]);
    }
  }
  // ceil(box / elementStride) elements per dimension: 32, 2, 1, 2, 1.
  EXPECT_EQ(m.box_extent(1), 2u);
  EXPECT_EQ(m.box_extent(2), 1u);
  EXPECT_EQ(m.box_bytes(), 32u * 2 * 1 * 2 * 1 * 4);
}

TEST(EmuTensorMap, DecodeRejectsForeignBytes) {
  alignas(64) unsigned char map[128] = {};
  TensorMap m;
  EXPECT_FALSE(decode_tensor_map(map, m));  // all zero: no magic
  Args a;
  ASSERT_EQ(a.encode(), "");
  a.map[0] ^= 1;  // corrupt the magic
  EXPECT_FALSE(decode_tensor_map(a.map, m));
}

// "when interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, the first element of this array is ignored
// since TMA doesn't support the stride for dimension zero" (cuda.h), and PTX ISA 5.5.3.2
// "Traversal-Stride": "For non-interleaved layout, the traversal stride in dimension 0 must
// always be 1". A map encoded with elementStrides[0] = 4 walks dimension 0 densely.
TEST(EmuTensorMap, ElementStrideOfDimensionZeroIgnored) {
  Args a;
  a.swizzle = 0;
  a.es[0] = 4;
  ASSERT_EQ(a.encode(), "");
  TensorMap m;
  ASSERT_TRUE(decode_tensor_map(a.map, m));
  EXPECT_EQ(m.elem_strides[0], 1u);
  EXPECT_EQ(m.box_extent(0), 64u);
  EXPECT_EQ(m.box_bytes(), 64u * 32u * 2u);
  const std::int32_t c[2] = {0, 0};
  std::vector<std::uint64_t> g;
  for_each_box_element(m, c, [&](std::uint32_t, std::uint64_t addr, bool in) {
    if (in && g.size() < 4) g.push_back(addr);
  });
  EXPECT_EQ(g, (std::vector<std::uint64_t>{0x10000, 0x10002, 0x10004, 0x10006}));
}

struct Visit {
  std::uint32_t smem;
  std::uint64_t global;
  bool in;
};

std::vector<Visit> walk(const TensorMap& m, std::int32_t c0, std::int32_t c1) {
  std::vector<Visit> v;
  const std::int32_t c[2] = {c0, c1};
  for_each_box_element(m, c, [&](std::uint32_t s, std::uint64_t g, bool in) { v.push_back({s, g, in}); });
  return v;
}

// PTX ISA 5.5.3.3 "Out of Boundary Access": elements of the bounding box outside the tensor are
// filled (zero or NaN), so the walk visits them, marked out of bounds, still occupying their
// shared-memory slot. f32 tensor of 100 x 50 (rows of 400 bytes), box 32 x 16 at the ragged
// corner (96, 40): only x 96..99 and y 40..49 are inside.
TEST(EmuTensorMap, RaggedEdgeWalksOobElements) {
  Args a;
  a.dtype = kF32;
  a.dims[0] = 100;
  a.dims[1] = 50;
  a.strides[0] = 400;
  a.box[0] = 32;
  a.box[1] = 16;
  a.swizzle = 3;
  ASSERT_EQ(a.encode(), "");
  TensorMap m;
  ASSERT_TRUE(decode_tensor_map(a.map, m));

  auto v = walk(m, 96, 40);
  ASSERT_EQ(v.size(), 32u * 16u);
  int inside = 0;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 32; ++x) {
      const Visit& e = v[y * 32 + x];
      EXPECT_EQ(e.smem, static_cast<std::uint32_t>((y * 32 + x) * 4)) << "shared-memory order: x fastest";
      const bool in = 96 + x < 100 && 40 + y < 50;
      EXPECT_EQ(e.in, in) << x << " " << y;
      if (in) {
        ++inside;
        EXPECT_EQ(e.global, 0x10000u + (96 + x) * 4 + (40 + y) * 400u);
      }
    }
  EXPECT_EQ(inside, 4 * 10);

  // Negative start coordinates: the first 8 columns and 3 rows lie before the tensor.
  v = walk(m, -8, -3);
  inside = 0;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 32; ++x) {
      const Visit& e = v[y * 32 + x];
      const bool in = x >= 8 && y >= 3;
      EXPECT_EQ(e.in, in) << x << " " << y;
      if (in) {
        ++inside;
        EXPECT_EQ(e.global, 0x10000u + (x - 8) * 4 + (y - 3) * 400u);
      }
    }
  EXPECT_EQ(inside, 24 * 13);

  // Entirely outside: every element out of bounds.
  v = walk(m, 100, 0);
  for (const Visit& e : v) EXPECT_FALSE(e.in);
}

// PTX ISA 5.5.3.2: "the traversal stride specifies the exact number of elements to be skipped";
// cuda.h: "TMA loads ceil(boxDim[i] / elementStrides[i]) number of elements along i-th dimension".
// Box 16 x 9 with stride 3 along dimension 1 loads rows c1, c1+3, c1+6, packed in shared memory.
TEST(EmuTensorMap, ElementStridesSkipRows) {
  Args a;
  a.dtype = kF16;
  a.dims[0] = 64;
  a.dims[1] = 40;
  a.strides[0] = 128;
  a.box[0] = 16;
  a.box[1] = 9;
  a.es[1] = 3;
  a.swizzle = 0;
  ASSERT_EQ(a.encode(), "");
  TensorMap m;
  ASSERT_TRUE(decode_tensor_map(a.map, m));
  EXPECT_EQ(m.box_extent(1), 3u);
  EXPECT_EQ(m.box_bytes(), 16u * 3u * 2u);
  auto v = walk(m, 8, 5);
  ASSERT_EQ(v.size(), 16u * 3u);
  for (int j = 0; j < 3; ++j)
    for (int x = 0; x < 16; ++x) {
      const Visit& e = v[j * 16 + x];
      EXPECT_TRUE(e.in);
      EXPECT_EQ(e.smem, static_cast<std::uint32_t>((j * 16 + x) * 2));
      EXPECT_EQ(e.global, 0x10000u + (8 + x) * 2 + (5 + 3 * j) * 128u);
    }
  // ceil: box 8 with stride 3 gives rows c, c+3, c+6; at c = 36 of 40 rows only 36 and 39 are in.
  a.box[1] = 8;
  ASSERT_EQ(a.encode(), "");
  ASSERT_TRUE(decode_tensor_map(a.map, m));
  EXPECT_EQ(m.box_extent(1), 3u);
  v = walk(m, 0, 36);
  ASSERT_EQ(v.size(), 48u);
  EXPECT_TRUE(v[0].in);
  EXPECT_TRUE(v[16].in);
  EXPECT_FALSE(v[32].in);
  EXPECT_EQ(v[16].global, 0x10000u + 39 * 128u);
}

// Rank 3: dimension 0 fastest, then 1, then 2, in shared memory.
TEST(EmuTensorMap, Rank3WalkOrder) {
  Args a;
  a.dtype = kU8;
  a.rank = 3;
  a.dims[0] = 32;
  a.dims[1] = 4;
  a.dims[2] = 3;
  a.strides[0] = 32;
  a.strides[1] = 256;  // padded planes
  a.box[0] = 16;
  a.box[1] = 2;
  a.box[2] = 2;
  a.swizzle = 0;
  ASSERT_EQ(a.encode(), "");
  TensorMap m;
  ASSERT_TRUE(decode_tensor_map(a.map, m));
  const std::int32_t c[3] = {16, 1, 1};
  std::vector<Visit> v;
  for_each_box_element(m, c, [&](std::uint32_t s, std::uint64_t g, bool in) { v.push_back({s, g, in}); });
  ASSERT_EQ(v.size(), 64u);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 16; ++x) {
        const Visit& e = v[(z * 2 + y) * 16 + x];
        EXPECT_EQ(e.smem, static_cast<std::uint32_t>((z * 2 + y) * 16 + x));
        EXPECT_TRUE(e.in);
        EXPECT_EQ(e.global, 0x10000u + (16 + x) + (1 + y) * 32u + (1 + z) * 256u);
      }
}

}  // namespace
}  // namespace mgpu::emu
