#include "core/arch.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mgpu::core {
namespace {

TEST(Arch, ShortAndFullFormsNameTheArchSpecificTargets) {
  EXPECT_EQ(parse_arch("sm_90").name, "sm_90a");
  EXPECT_EQ(parse_arch("sm_90a").name, "sm_90a");
  EXPECT_EQ(parse_arch("sm_100").name, "sm_100a");
  EXPECT_EQ(parse_arch("sm_100a").name, "sm_100a");
}

TEST(Arch, UnknownArchIsInvalidInputListingTheChoices) {
  for (const char* bad : {"sm_42", "", "sm_90b", "SM_90", "sm_80", "sm_100aa"}) {
    try {
      parse_arch(bad);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
      EXPECT_EQ(exit_code_for(e.kind()), 2);
      std::string msg = e.what();
      for (const char* choice : {"sm_90", "sm_90a", "sm_100", "sm_100a"})
        EXPECT_NE(msg.find(choice), std::string::npos) << msg;
    }
  }
}

TEST(Arch, TableIsConsistent) {
  for (const ArchSpec& a : all_archs()) {
    EXPECT_FALSE(a.devices.empty()) << a.name;
    EXPECT_LE(a.smem_per_block_optin, a.smem_per_sm) << a.name;
    EXPECT_LE(a.max_cluster_size_portable, a.max_cluster_size) << a.name;
    for (const DeviceSpec& d : a.devices) {
      EXPECT_GT(d.sm_count, 0);
      EXPECT_GE(d.peak_tflops_fp8, d.peak_tflops_bf16) << d.name;
      EXPECT_GT(d.hbm_gbytes_per_s, 0);
      EXPECT_GT(d.l2_bytes, 0);
    }
  }
  EXPECT_EQ(parse_arch("sm_90a").tmem_columns, 0);  // TMEM is Blackwell-only
  EXPECT_EQ(parse_arch("sm_100a").tmem_columns, 512);
  EXPECT_EQ(parse_arch("sm_90a").ptx_feature(), "+ptx86");  // mbarrier.arrive.relaxed
  EXPECT_EQ(parse_arch("sm_100a").ptx_feature(), "+ptx86");
}

TEST(Arch, ComputeCapabilityAndDriverNamesMapToTheTable) {
  ASSERT_NE(arch_for_compute_capability(9, 0), nullptr);
  EXPECT_EQ(arch_for_compute_capability(9, 0)->name, "sm_90a");
  EXPECT_EQ(arch_for_compute_capability(10, 0)->name, "sm_100a");
  EXPECT_EQ(arch_for_compute_capability(8, 0), nullptr);
  const ArchSpec& h = parse_arch("sm_90a");
  ASSERT_NE(h.find_device("NVIDIA H100 80GB HBM3"), nullptr);
  EXPECT_EQ(h.find_device("NVIDIA H100 80GB HBM3")->sm_count, 132);
  EXPECT_EQ(h.find_device("NVIDIA H100 PCIe")->sm_count, 114);
  EXPECT_EQ(h.find_device("NVIDIA H200")->hbm_gbytes_per_s, 4800.0);
  EXPECT_EQ(h.find_device("NVIDIA A100-SXM4-80GB"), nullptr);
}

}  // namespace
}  // namespace mgpu::core
