#include "core/tensor_map.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mgpu::core {
namespace {

TensorMap2D good() {
  return {.base = 0x10000, .element = TmaElement::BF16, .rows = 4096, .cols = 4096, .row_stride_bytes = 8192,
          .box_rows = 128, .box_cols = 64, .swizzle = ir::Swizzle::B128};
}

void expect_rejected(TensorMap2D t, const char* why) {
  try {
    validate_tensor_map_2d(t);
    FAIL() << "accepted; expected: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(TensorMap, ValidatesWhatTheHardwareRequires) {
  EXPECT_NO_THROW(validate_tensor_map_2d(good()));
  TensorMap2D t = good();
  t.base += 8;
  expect_rejected(t, "16-byte aligned");
  t = good();
  t.row_stride_bytes = 8190;
  expect_rejected(t, "multiple of 16");
  t = good();
  t.box_cols = 128;  // 256 bytes inside a 128-byte swizzle
  expect_rejected(t, "swizzle span");
  t = good();
  t.box_rows = 512;
  expect_rejected(t, "outside [1, 256]");
  t = good();
  t.cols = 5000;  // a row of 10000 bytes does not fit an 8192-byte stride
  expect_rejected(t, "shorter than a row");
  t = good();
  t.swizzle = ir::Swizzle::None;
  t.box_cols = 128;
  EXPECT_NO_THROW(validate_tensor_map_2d(t));
}

}  // namespace
}  // namespace mgpu::core
