// Smoke test of MLIR 22: a gpu.module kernel lowers to PTX for both targets.
#include "core/mlir_to_ptx.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tests/support/test_data.h"

namespace mgpu::core {
namespace {

std::string saxpy() { return ::mgpu::testing::read_test_data("saxpy.mlir"); }

class LowerToPtx : public ::testing::TestWithParam<const char*> {};

TEST_P(LowerToPtx, SaxpyBecomesPtxForTheTarget) {
  const ArchSpec& arch = parse_arch(GetParam());
  LoweredPtx out = lower_mlir_to_ptx(saxpy(), arch);
  ASSERT_EQ(out.modules.size(), 1u);
  const PtxModule& m = out.modules[0];
  EXPECT_EQ(m.name, "smoke");
  EXPECT_EQ(m.kernels, std::vector<std::string>{"saxpy"});
  EXPECT_NE(m.ptx.find(".target " + std::string(arch.name)), std::string::npos) << m.ptx;
  EXPECT_NE(m.ptx.find(".visible .entry saxpy("), std::string::npos);
  EXPECT_NE(m.ptx.find("ld.global"), std::string::npos) << m.ptx;
  EXPECT_NE(m.ptx.find("st.global"), std::string::npos) << m.ptx;
  // Bare-pointer convention: two pointers, the scalar and the bound -- four parameters.
  EXPECT_NE(m.ptx.find("saxpy_param_3"), std::string::npos);
  EXPECT_EQ(m.ptx.find("saxpy_param_4"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Archs, LowerToPtx, ::testing::Values("sm_90a", "sm_100a"));

TEST(LowerToPtx, PipelineNamesTheChipAndPtxVersion) {
  std::string p = nvvm_pipeline(parse_arch("sm_100a"), {});
  EXPECT_NE(p.find("chip=sm_100a"), std::string::npos) << p;
  EXPECT_NE(p.find("features=+ptx86"), std::string::npos) << p;
  EXPECT_NE(p.find("gpu-module-to-binary{format=isa}"), std::string::npos) << p;
}

TEST(LowerToPtx, ParseErrorNamesTheStageAndCarriesTheDiagnostic) {
  try {
    lower_mlir_to_ptx("module { gpu.module @m { bogus.op } }", parse_arch("sm_90a"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    std::string msg = e.what();
    EXPECT_NE(msg.find("parse"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bogus.op"), std::string::npos) << msg;
  }
}

TEST(LowerToPtx, LoweringErrorNamesTheStage) {
  // memref.alloc of a dynamic shape has no lowering inside a kernel without a size.
  const char* bad = R"(module attributes {gpu.container_module} {
    gpu.module @m { gpu.func @k(%p: memref<?xf32>) kernel { %c0 = arith.constant 0 : index
      %v = memref.load %p[%c0] : memref<?xf32>  gpu.return } } })";
  try {
    lower_mlir_to_ptx(bad, parse_arch("sm_90a"));
    FAIL() << "a dynamic memref cannot use the bare-pointer convention";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Compile);
    EXPECT_NE(std::string(e.what()).find("lower"), std::string::npos) << e.what();
  }
}

TEST(LowerToPtx, DumpDirectoryReceivesPassesAndPtx) {
  auto dir = std::filesystem::temp_directory_path() / "mgpu-dump-test";
  std::filesystem::remove_all(dir);
  lower_mlir_to_ptx(saxpy(), parse_arch("sm_90a"), {.opt_level = 3, .dump_dir = dir.string()});
  EXPECT_TRUE(std::filesystem::exists(dir / "smoke.ptx"));
  int files = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_GT(files, 3) << "expected the IR after several passes";
  std::filesystem::remove_all(dir);
}

// The nesting guard counts < > as well as ( [ {: 30000 nested tuple<...> types overflowed the
// parser's stack (round 4); an arrow (->) and an affine comparison (>=) are no nesting.
TEST(LowerToPtx, TypesNestedTooDeepAreRefused) {
  std::string deep = "module attributes {gpu.container_module} { gpu.module @k { gpu.func @f(%a: ";
  for (int i = 0; i < 30000; ++i) deep += "tuple<";
  deep += "i32";
  for (int i = 0; i < 30000; ++i) deep += ">";
  deep += ") kernel { gpu.return } } }";
  try {
    lower_mlir_to_ptx(deep, parse_arch("sm_90a"));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("levels deep"), std::string::npos) << e.what();
  }
  std::string arrows = "module attributes {gpu.container_module} { gpu.module @k {";
  for (int i = 0; i < 300; ++i)
    arrows += "func.func @g" + std::to_string(i) + "(%a: index) -> index { %b = affine.apply affine_map<(d0) -> (d0 + 1)>(%a) return %b : index }\n";
  arrows += "gpu.func @f() kernel { gpu.return } } }";
  EXPECT_NO_THROW(lower_mlir_to_ptx(arrows, parse_arch("sm_90a")));
}

// Workgroup attributions beyond a block's shared memory: refused, not dropped unseen (N_mlir_bigwg).
TEST(LowerToPtx, WorkgroupAttributionsBeyondABlockAreRefused) {
  const std::string big = "module attributes {gpu.container_module} { gpu.module @k { gpu.func @f() workgroup(%w : "
                          "memref<1073741824xf32, #gpu.address_space<workgroup>>) kernel { gpu.return } } }";
  try {
    lower_mlir_to_ptx(big, parse_arch("sm_90a"));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("workgroup attributions"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mgpu::core
