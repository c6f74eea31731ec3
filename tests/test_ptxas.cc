// Smoke test of the CUDA toolkit: ptxas turns the lowered PTX into a cubin for both targets,
// and our reading of its resource report matches the report itself.
#include "core/ptxas.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tests/support/test_data.h"
#include "core/mlir_to_ptx.h"

namespace mgpu::core {
namespace {

std::string saxpy_ptx(const ArchSpec& arch) {
  return lower_mlir_to_ptx(::mgpu::testing::read_test_data("saxpy.mlir"), arch).modules.at(0).ptx;
}

class Ptxas : public ::testing::TestWithParam<const char*> {};

TEST_P(Ptxas, AssemblesTheSmokeKernelIntoACubin) {
  const ArchSpec& arch = parse_arch(GetParam());
  Cubin c = assemble_with_ptxas(saxpy_ptx(arch), arch);
  ASSERT_GE(c.image.size(), 4u);
  EXPECT_EQ(c.image.substr(0, 4), "\x7f" "ELF");
  ASSERT_EQ(c.kernels.count("saxpy"), 1u) << c.log;
  const KernelResources& r = c.kernels.at("saxpy");
  EXPECT_GT(r.registers, 0);
  EXPECT_LE(r.registers, arch.max_regs_per_thread);
  EXPECT_EQ(r.spill_store_bytes, 0);
  EXPECT_NE(c.log.find("Used " + std::to_string(r.registers) + " registers"), std::string::npos) << c.log;
  EXPECT_NE(c.log.find(std::string(arch.name)), std::string::npos) << c.log;
}

INSTANTIATE_TEST_SUITE_P(Archs, Ptxas, ::testing::Values("sm_90a", "sm_100a"));

TEST(Ptxas, ParsesEveryFieldOfTheReport) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm\n"
      "    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 560 bytes cmem[0]\n"
      "ptxas info    : Function properties for copy\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers, 384 bytes cmem[0]\n";
  auto k = parse_assembler_report(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k["gemm"].registers, 168);
  EXPECT_EQ(k["gemm"].stack_bytes, 24);
  EXPECT_EQ(k["gemm"].spill_store_bytes, 8);
  EXPECT_EQ(k["gemm"].spill_load_bytes, 12);
  EXPECT_EQ(k["gemm"].barriers, 1);
  EXPECT_EQ(k["gemm"].shared_static_bytes, 1024);
  EXPECT_EQ(k["copy"].registers, 10);
  EXPECT_EQ(k["copy"].shared_static_bytes, 0);
}

TEST(Ptxas, BrokenPtxIsACompileErrorCarryingTheLog) {
  try {
    assemble_with_ptxas(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { bogus; }\n",
                        parse_arch("sm_90a"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Compile);
    std::string msg = e.what();
    EXPECT_NE(msg.find("ptxas failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bogus"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace mgpu::core
